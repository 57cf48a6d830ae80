@testable import CoinWatchProto
import Testing

/// The validator walks plain shape tables and looks names up only to build an error. Here it is held against a
/// reference walk over the schema's fields, written the plain way (each field looked up by number, its name in
/// hand): both must accept the same inputs and refuse the others with the same code, field path and message. An
/// input the validator let through that the reference refuses would reach protobuf-c unchecked.
@Suite("Wire validator", .serialized)
struct WireValidatorTests {
    static let inputsPerType = 3_000

    @Test("the walk refuses exactly what the reference walk refuses, with the same error", arguments: MessageType.all)
    func agreesWithTheReference(_ messageType: MessageType) async throws {
        let schema = try #require((messageType.type as? any WireSchemaDescribed.Type)?.wireSchema)
        var g = RandomValues(seed: messageType.seed ^ 0x3A11)
        var seeds = messageType.type.filledSamples(using: &g).map { $0.serializedBytes() }
        for other in allMessageTypes {
            seeds.append(other.random(using: &g, filled: true, depth: 0).serializedBytes())
        }
        var mutator = Mutator(seed: messageType.seed ^ 0x3A12, seeds: seeds)
        var accepted = 0
        var refused = 0
        for round in 0..<Self.inputsPerType {
            if round % 500 == 0 { await Task.yield() }
            let input = mutator.next()
            input.withUnsafeBytes { bytes in
                let found = Self.outcome { () throws(WireDecodingError) in try WireValidator.validate(bytes, schema: schema) }
                let expected = Self.outcome { () throws(WireDecodingError) in try ReferenceWalk.validate(bytes, schema: schema) }
                if found != expected {
                    Issue.record("\(schema.name): the walk gives \(found), the reference \(expected), for \(input)")
                }
                if expected == nil { accepted += 1 } else { refused += 1 }
            }
        }
        #expect(accepted > 0 && refused > 0, "both outcomes must occur: \(accepted) accepted, \(refused) refused")
    }

    @Test("field numbers of 128 and above are found by search, nested ones too, and named in errors")
    func largeFieldNumbers() throws {
        func field(_ number: UInt32, _ name: String, _ kind: WireSchema.Kind) -> WireSchema.Field {
            // The JSON side is not used here.
            WireSchema.Field(
                number: number, name: name, kind: kind, json: .init(key: "", form: .string, cardinality: .singular, position: 0))
        }
        let inner = WireSchema(name: "test.Inner", fields: [field(1, "small", .string), field(300, "far", .string)])
        let outer = WireSchema(
            name: "test.Outer",
            fields: [field(2, "count", .varint), field(1000, "label", .string), field(70_000, "inner", .message(inner))])
        func length(_ bytes: [UInt8]) -> [UInt8] {
            var prefix: [UInt8] = []
            Varint.append(UInt64(bytes.count), to: &prefix)
            return prefix + bytes
        }
        func tag(_ number: UInt64, _ wireType: UInt64) -> [UInt8] {
            var bytes: [UInt8] = []
            Varint.append(number << 3 | wireType, to: &bytes)
            return bytes
        }
        let good = tag(2, 0) + [5] + tag(1000, 2) + length(Array("BTC".utf8))
            + tag(70_000, 2) + length(tag(300, 2) + length(Array("ok".utf8)))
        let cases: [(String, [UInt8], String?)] = [
            ("valid", good, nil),
            ("invalid UTF-8 in 1000", tag(1000, 2) + length([0xFF]), "test.Outer.label: invalid UTF-8 at byte 0 of 1"),
            ("NUL in nested 300", tag(70_000, 2) + length(tag(300, 2) + length([0x61, 0])),
             "test.Outer.inner.far: embedded NUL at byte 1 of 2"),
            ("wrong wire type for 1000", tag(1000, 0) + [1], "test.Outer.label: wire type 0 where 2 is expected"),
            ("unknown 5000 truncated", tag(5000, 0), "test.Outer.<field 5000>: truncated or overlong varint"),
        ]
        for (name, bytes, message) in cases {
            let (error, reference) = bytes.withUnsafeBytes { raw in
                (Self.outcome { () throws(WireDecodingError) in try WireValidator.validate(raw, schema: outer) },
                 Self.outcome { () throws(WireDecodingError) in try ReferenceWalk.validate(raw, schema: outer) })
            }
            #expect(error?.message == message, "\(name)")
            #expect(error == reference, "\(name)")
        }
    }

    /// The error `body` throws, nil when it throws none.
    static func outcome(_ body: () throws(WireDecodingError) -> Void) -> WireDecodingError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }
}

/// The validator's checks written the plain way, as the model the tests hold it against: each field looked up in
/// the schema by number (`WireSchema.field`), its name carried up the recursion as the error unwinds.
enum ReferenceWalk {
    struct Failure: Error {
        var code: WireDecodingError.Code
        var detail: String
        var reversedPath: [String] = []
    }

    static func validate(_ bytes: UnsafeRawBufferPointer, schema: WireSchema) throws(WireDecodingError) {
        do {
            try walk(bytes, from: 0, to: bytes.count, schema: schema, depth: 0)
        } catch {
            let path = error.reversedPath.isEmpty ? nil : error.reversedPath.reversed().joined(separator: ".")
            let subject = path.map { "\(schema.name).\($0)" } ?? schema.name
            throw WireDecodingError(
                code: error.code, typeName: schema.name, fieldPath: path, message: "\(subject): \(error.detail)")
        }
    }

    static func walk(
        _ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int, schema: WireSchema, depth: Int
    ) throws(Failure) {
        guard depth <= WireValidator.maxDepth else {
            throw Failure(code: .malformed, detail: "nested deeper than \(WireValidator.maxDepth) messages")
        }
        var index = start
        while index < end {
            let tagOffset = index
            guard let tag = varint(bytes, &index, end) else {
                throw Failure(code: .malformed, detail: "truncated or overlong tag at byte \(tagOffset)")
            }
            guard tag <= UInt64(UInt32.max), tag >> 3 != 0 else {
                throw Failure(code: .malformed, detail: "invalid field number \(tag >> 3) at byte \(tagOffset)")
            }
            let number = UInt32(truncatingIfNeeded: tag >> 3)
            let wireType = tag & 7
            let field = schema.field(number)
            let name = field?.name ?? "<field \(number)>"
            if let field, field.kind.wireType != wireType {
                throw Failure(
                    code: .malformed, detail: "wire type \(wireType) where \(field.kind.wireType) is expected",
                    reversedPath: [name])
            }
            switch wireType {
            case 0:
                guard varint(bytes, &index, end) != nil else {
                    throw Failure(code: .malformed, detail: "truncated or overlong varint", reversedPath: [name])
                }
            case 1, 5:
                let width = wireType == 1 ? 8 : 4
                guard end - index >= width else {
                    throw Failure(code: .malformed, detail: "needs \(width) bytes, \(end - index) left", reversedPath: [name])
                }
                index += width
            case 2:
                guard let length = varint(bytes, &index, end) else {
                    throw Failure(code: .malformed, detail: "truncated length prefix", reversedPath: [name])
                }
                guard length <= UInt64(end - index) else {
                    throw Failure(
                        code: .malformed, detail: "length \(length) exceeds the \(end - index) bytes left", reversedPath: [name])
                }
                let body = index..<(index + Int(length))
                index = body.upperBound
                switch field?.kind {
                case .string?:
                    // The UTF-8 check is the validator's own; "UTF-8 check" holds it against the standard library.
                    if let problem = UTF8Check.firstProblem(bytes, from: body.lowerBound, to: body.upperBound) {
                        throw Failure(
                            code: problem.isNUL ? .embeddedNUL : .invalidUTF8,
                            detail: problem.isNUL
                                ? "embedded NUL at byte \(problem.offset) of \(body.count)"
                                : "invalid UTF-8 at byte \(problem.offset) of \(body.count)",
                            reversedPath: [name])
                    }
                case .message(let nested)?:
                    do {
                        try walk(bytes, from: body.lowerBound, to: body.upperBound, schema: nested, depth: depth + 1)
                    } catch {
                        var failure = error
                        failure.reversedPath.append(name)
                        throw failure
                    }
                default:
                    break
                }
            default:
                throw Failure(
                    code: .malformed, detail: "unsupported wire type \(wireType) at byte \(tagOffset)", reversedPath: [name])
            }
        }
    }

    static func varint(_ bytes: UnsafeRawBufferPointer, _ index: inout Int, _ end: Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var position = index
        while position < end, shift < 70 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                index = position
                return value
            }
            shift += 7
        }
        return nil
    }
}
