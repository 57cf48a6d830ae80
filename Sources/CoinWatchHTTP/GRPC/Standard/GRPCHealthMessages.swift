import CoinWatchProto

/// `grpc.health.v1.HealthCheckRequest` (proto/grpc/health/v1/health.proto).
struct GRPCHealthCheckRequest: WireMessage {
    var service = ""

    init() {}

    init(service: String) {
        self.service = service
    }

    init(serializedBytes bytes: UnsafeRawBufferPointer, maxBytes: Int) throws(WireDecodingError) {
        guard bytes.count <= maxBytes else {
            throw WireDecodingError(code: .tooLarge, typeName: Self.protoName, message: "\(Self.protoName) is too large")
        }
        try ProtoFields.forEach(bytes, Self.protoName) { (field, value) throws(WireDecodingError) in
            if field == 1, case .bytes(let text) = value { service = try ProtoFields.string(text, Self.protoName) }
        }
    }

    func serializedBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        serialize(appendingTo: &bytes)
        return bytes
    }

    func serialize(appendingTo buffer: inout [UInt8]) {
        ProtoFields.appendString(1, service, to: &buffer)
    }

    static var protoName: String { "grpc.health.v1.HealthCheckRequest" }
}

/// `grpc.health.v1.HealthCheckResponse`.
struct GRPCHealthCheckResponse: WireMessage {
    enum Status: UInt64, Sendable {
        case unknown = 0
        case serving = 1
        case notServing = 2
        case serviceUnknown = 3
    }

    var status = Status.unknown

    init() {}

    init(status: Status) {
        self.status = status
    }

    init(serializedBytes bytes: UnsafeRawBufferPointer, maxBytes: Int) throws(WireDecodingError) {
        try ProtoFields.forEach(bytes, Self.protoName) { field, value in
            if field == 1, case .varint(let raw) = value { status = Status(rawValue: raw) ?? .unknown }
        }
    }

    func serializedBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        serialize(appendingTo: &bytes)
        return bytes
    }

    func serialize(appendingTo buffer: inout [UInt8]) {
        ProtoFields.appendVarint(1, status.rawValue, to: &buffer)
    }

    static var protoName: String { "grpc.health.v1.HealthCheckResponse" }
}
