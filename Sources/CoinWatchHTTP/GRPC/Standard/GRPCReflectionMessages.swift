import CoinWatchProto

/// `grpc.reflection.v1.ServerReflectionRequest` (v1alpha's is the same message): the host and which question.
struct GRPCReflectionRequest: WireMessage {
    enum Question: Hashable, Sendable {
        case none
        case fileByName(String)
        case fileContainingSymbol(String)
        case fileContainingExtension(type: String, number: Int32)
        case allExtensionNumbers(type: String)
        case listServices
    }

    var host = ""
    var question = Question.none
    /// The request as received, echoed in the response's `original_request`.
    var encoded: [UInt8] = []

    init() {}

    init(serializedBytes bytes: UnsafeRawBufferPointer, maxBytes: Int) throws(WireDecodingError) {
        let name = Self.protoName
        guard bytes.count <= maxBytes else {
            throw WireDecodingError(code: .tooLarge, typeName: name, message: "\(name) is too large")
        }
        encoded = Array(bytes)
        try ProtoFields.forEach(bytes, name) { (field, value) throws(WireDecodingError) in
            guard case .bytes(let data) = value else { return }
            switch field {
            case 1: host = try ProtoFields.string(data, name)
            case 3: question = .fileByName(try ProtoFields.string(data, name))
            case 4: question = .fileContainingSymbol(try ProtoFields.string(data, name))
            case 5:
                var type = ""
                var number: Int32 = 0
                try ProtoFields.forEach(data, name) { (field, value) throws(WireDecodingError) in
                    switch (field, value) {
                    case (1, .bytes(let text)): type = try ProtoFields.string(text, name)
                    case (2, .varint(let raw)): number = Int32(truncatingIfNeeded: raw)
                    default: break
                    }
                }
                question = .fileContainingExtension(type: type, number: number)
            case 6: question = .allExtensionNumbers(type: try ProtoFields.string(data, name))
            case 7: question = .listServices
            default: break
            }
        }
    }

    func serializedBytes() -> [UInt8] { encoded }

    func serialize(appendingTo buffer: inout [UInt8]) { buffer.append(contentsOf: encoded) }

    static var protoName: String { "grpc.reflection.v1.ServerReflectionRequest" }
}

/// `grpc.reflection.v1.ServerReflectionResponse`: the echoed request and one answer.
struct GRPCReflectionResponse: WireMessage {
    enum Answer: Hashable, Sendable {
        case none
        case files([[UInt8]])
        case extensionNumbers(type: String, numbers: [Int32])
        case services([String])
        case error(code: Int32, message: String)
    }

    var validHost = ""
    var originalRequest: [UInt8] = []
    var answer = Answer.none

    init() {}

    init(validHost: String, originalRequest: [UInt8], answer: Answer) {
        self.validHost = validHost
        self.originalRequest = originalRequest
        self.answer = answer
    }

    init(serializedBytes bytes: UnsafeRawBufferPointer, maxBytes: Int) throws(WireDecodingError) {
        throw WireDecodingError(code: .malformed, typeName: Self.protoName, message: "\(Self.protoName) is only sent")
    }

    func serializedBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        serialize(appendingTo: &bytes)
        return bytes
    }

    func serialize(appendingTo buffer: inout [UInt8]) {
        ProtoFields.appendString(1, validHost, to: &buffer)
        ProtoFields.appendBytes(2, originalRequest, to: &buffer, always: true)
        var body: [UInt8] = []
        switch answer {
        case .none:
            return
        case .files(let files):
            for file in files { ProtoFields.appendBytes(1, file, to: &body, always: true) }
            ProtoFields.appendBytes(4, body, to: &buffer, always: true)
        case .extensionNumbers(let type, let numbers):
            ProtoFields.appendString(1, type, to: &body)
            for number in numbers {
                Varint.append(2 << 3, to: &body)
                Varint.append(UInt64(bitPattern: Int64(number)), to: &body)
            }
            ProtoFields.appendBytes(5, body, to: &buffer, always: true)
        case .services(let names):
            for name in names {
                var service: [UInt8] = []
                ProtoFields.appendString(1, name, to: &service)
                ProtoFields.appendBytes(1, service, to: &body, always: true)
            }
            ProtoFields.appendBytes(6, body, to: &buffer, always: true)
        case .error(let code, let message):
            ProtoFields.appendVarint(1, UInt64(bitPattern: Int64(code)), to: &body)
            ProtoFields.appendString(2, message, to: &body)
            ProtoFields.appendBytes(7, body, to: &buffer, always: true)
        }
    }

    static var protoName: String { "grpc.reflection.v1.ServerReflectionResponse" }
}
