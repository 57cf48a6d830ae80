@testable import CoinWatchProto
import Testing

/// The walk that writes JSON straight from an encoding must write what decoding and the generated encoder
/// write, byte for byte, and give up (nil) wherever it cannot be sure of that.
@Suite("JSON straight from the wire", .serialized)
struct WireJSONTests {
    /// What the walk writes for `bytes` as an `M`, nil when it gives up.
    private func walked<M: WireMessage>(_: M.Type, _ bytes: [UInt8]) -> [UInt8]? {
        guard let schema = (M.self as? any WireSchemaDescribed.Type)?.wireSchema else { return nil }
        return bytes.withUnsafeBytes { WireJSON.json($0, schema: schema) }
    }

    @Test("every message type has its table, and the table is the one its decoder checks against")
    func everyTypeHasATable() {
        for messageType in MessageType.all {
            let schema = (messageType.type as? any WireSchemaDescribed.Type)?.wireSchema
            #expect(schema?.name == messageType.type.protoName)
        }
    }

    @Test("the server's own encodings of random values of every type are walked, to the encoder's bytes",
          arguments: MessageType.all)
    func canonicalEncodings(_ messageType: MessageType) {
        canonicalEncodings(messageType.type, seed: messageType.seed)
    }

    private func canonicalEncodings<M: RandomMessage>(_: M.Type, seed: UInt64) {
        var g = RandomValues(seed: seed ^ 0x5A)
        var walkedCount = 0
        let values = M.filledSamples(using: &g) + (0..<60).map { _ in M.random(using: &g, filled: false, depth: 0) }
        for value in values {
            let bytes = value.serializedBytes()
            guard let json = walked(M.self, bytes) else { continue }
            walkedCount += 1
            #expect(json == value.jsonUTF8(), "\(String(decoding: json, as: UTF8.self))")
        }
        // A map entry whose key or value is the default is encoded without it, which the walk leaves to the
        // decoder; every other canonical encoding is walked.
        let fallbacks = values.filter { walked(M.self, $0.serializedBytes()) == nil }
        for value in fallbacks {
            #expect(value.serializedBytes().count > 0 && value.jsonUTF8().contains(UInt8(ascii: "{")))
        }
        #expect(walkedCount * 4 >= values.count * 3, "only \(walkedCount) of \(values.count) walked")
    }

    @Test("mutated encodings of every type: the walk writes what decoding writes, or gives up",
          arguments: MessageType.all)
    func mutatedEncodings(_ messageType: MessageType) async {
        await mutatedEncodings(messageType.type, seed: messageType.seed)
    }

    private func mutatedEncodings<M: RandomMessage>(_: M.Type, seed: UInt64) async {
        var g = RandomValues(seed: seed ^ 0x7E)
        var seeds = M.filledSamples(using: &g).map { $0.serializedBytes() }
        for i in 0..<8 { seeds.append(M.random(using: &g, filled: i % 2 == 0, depth: 0).serializedBytes()) }
        var mutator = Mutator(seed: seed ^ 0x11, seeds: seeds)
        var walkedCount = 0
        for round in 0..<3_000 {
            if round % 500 == 0 { await Task.yield() }
            let input = mutator.next()
            let decoded = try? M(serializedBytes: input)
            guard let json = walked(M.self, input) else { continue }
            walkedCount += 1
            #expect(decoded?.jsonUTF8() == json, "walked \(input) to \(String(decoding: json, as: UTF8.self))")
        }
        #expect(walkedCount > 0)
    }

    // MARK: - Each case the walk gives up on, and each it handles

    /// `Settings` with device "d", one rule for BTC (below 5), version 7: the encoder's bytes, built by hand.
    private static let deviceField: [UInt8] = [0x0A, 0x01, UInt8(ascii: "d")]
    private static let btcEntry: [UInt8] = [0x12, 0x0B, 0x0A, 0x03] + Array("BTC".utf8) + [0x12, 0x04, 0x0A, 0x02, 0x08, 0x0A]
    private static let versionField: [UInt8] = [0x18, 0x07]

    private func settings(_ bytes: [UInt8]) -> (walked: [UInt8]?, decoded: String?) {
        (walked(V1.Settings.self, bytes), (try? V1.Settings(serializedBytes: bytes))?.jsonString())
    }

    @Test("a canonical encoding is walked")
    func canonical() throws {
        let result = settings(Self.deviceField + Self.btcEntry + Self.versionField)
        let json = try #require(result.walked)
        #expect(String(decoding: json, as: UTF8.self)
            == #"{"deviceId":"d","rules":{"BTC":{"below":{"mantissa":"5"}}},"version":"7"}"#)
        #expect(String(decoding: json, as: UTF8.self) == result.decoded)
    }

    @Test("defaults written out on the wire are left out of JSON, as the encoder leaves them")
    func explicitDefaults() throws {
        let bytes = [0x0A, 0x00] + Self.btcEntry + [0x18, 0x00, 0x20, 0x00]
        let json = try #require(settings(bytes).walked)
        #expect(String(decoding: json, as: UTF8.self) == #"{"rules":{"BTC":{"below":{"mantissa":"5"}}}}"#)
        #expect(String(decoding: json, as: UTF8.self) == settings(bytes).decoded)
    }

    @Test("map entries out of order are written sorted by key bytes")
    func unsortedMap() throws {
        func entry(_ key: String) -> [UInt8] {
            [0x12, UInt8(4 + key.utf8.count), 0x0A, UInt8(key.utf8.count)] + Array(key.utf8) + [0x12, 0x00]
        }
        let bytes = Self.deviceField + entry("ETH") + entry("BTC") + entry("Ä") + entry("ADA")
        let result = settings(bytes)
        let json = try #require(result.walked)
        #expect(String(decoding: json, as: UTF8.self)
            == #"{"deviceId":"d","rules":{"ADA":{},"BTC":{},"ETH":{},"Ä":{}}}"#)
        #expect(String(decoding: json, as: UTF8.self) == result.decoded)
    }

    @Test("escapes in strings and map keys are the encoder's")
    func escapes() throws {
        let key = Array("a\"\\\n\u{1}é".utf8)
        let bytes = [0x0A, UInt8(key.count)] + key + [0x12, UInt8(4 + key.count), 0x0A, UInt8(key.count)] + key
            + [0x12, 0x00]
        let result = settings(bytes)
        #expect(try String(decoding: #require(result.walked), as: UTF8.self) == result.decoded)
    }

    @Test("what the walk gives up on: each decodes to something it cannot be sure of, or fails to decode",
          arguments: [
              ("a field out of order", Self.versionField + [0x0A, 0x01, 0x64]),
              ("a field given twice", Self.versionField + [0x18, 0x08]),
              ("an unknown field", [0x28, 0x01] + Self.versionField),
              ("a map entry apart from its map", Self.btcEntry + Self.versionField + Self.btcEntry),
              ("a non-minimal varint", [0x18, 0x87, 0x00]),
              ("a non-minimal length", [0x0A, 0x81, 0x00, 0x64]),
              ("the wrong wire type", [0x1D, 0x01, 0x02, 0x03, 0x04]),
              ("invalid UTF-8", [0x0A, 0x01, 0xFF]),
              ("a NUL in a string", [0x0A, 0x01, 0x00]),
              ("a map entry without its key", [0x12, 0x02, 0x12, 0x00]),
              ("a map entry without its value", [0x12, 0x05, 0x0A, 0x03] + Array("BTC".utf8)),
              ("a map entry with its value first", [0x12, 0x07, 0x12, 0x00, 0x0A, 0x03] + Array("BTC".utf8)),
              ("a map entry with a field after its value", [0x12, 0x09, 0x0A, 0x03] + Array("BTC".utf8) + [0x12, 0x00, 0x18, 0x01]),
              ("one key twice", Self.btcEntry + Self.btcEntry),
              ("a truncated field", [0x0A, 0x05, 0x64]),
              ("a truncated tag", [0x98]),
              ("field number 0", [0x00, 0x00]),
          ] as [(String, [UInt8])])
    func givesUp(_ name: String, _ bytes: [UInt8]) {
        #expect(settings(bytes).walked == nil, "\(name)")
    }

    @Test("two members of one oneof: protobuf keeps the last, which the walk leaves to the decoder")
    func twoOneofMembers() throws {
        var one = V1.Frame()
        one.kind = .ping(V1.Ping())
        var other = V1.Frame()
        other.kind = .pong(V1.Pong())
        let bytes = one.serializedBytes() + other.serializedBytes()
        #expect(walked(V1.Frame.self, one.serializedBytes()) == one.jsonUTF8())
        #expect(walked(V1.Frame.self, bytes) == nil)
        #expect(try V1.Frame(serializedBytes: bytes) == other)
    }

    @Test("a set oneof member is written at its default value, and unnamed enum numbers as numbers")
    func oneofAndEnums() throws {
        var frame = V1.Frame()
        frame.kind = .ping(V1.Ping())
        let json = try #require(walked(V1.Frame.self, frame.serializedBytes()))
        #expect(json == frame.jsonUTF8())
        #expect(String(decoding: json, as: UTF8.self) == #"{"ping":{}}"#)

        var save = V1.SaveSettingsRequest()
        save.precondition = .expectedVersion(0)
        let atDefault = try #require(walked(V1.SaveSettingsRequest.self, save.serializedBytes()))
        #expect(atDefault == save.jsonUTF8())
        #expect(String(decoding: atDefault, as: UTF8.self) == #"{"expectedVersion":"0"}"#)

        var status = V1.Status()
        status.code = V1.Status.Code(rawValue: 99)
        let unnamed = try #require(walked(V1.Status.self, status.serializedBytes()))
        #expect(unnamed == status.jsonUTF8())
        #expect(String(decoding: unnamed, as: UTF8.self).contains(#":99"#))
    }

    @Test("json(fromBinary:) gives the walk's JSON, or the decoder's JSON or error where the walk gives up")
    func publicConversion() throws {
        let canonical = Self.deviceField + Self.btcEntry + Self.versionField
        let fromWire = try canonical.withUnsafeBytes { try V1.Settings.json(fromBinary: $0) }
        #expect(fromWire == walked(V1.Settings.self, canonical))
        let unsorted = Self.versionField + Self.deviceField
        #expect(walked(V1.Settings.self, unsorted) == nil)
        #expect(try unsorted.withUnsafeBytes { try V1.Settings.json(fromBinary: $0) }
            == V1.Settings(serializedBytes: unsorted).jsonUTF8())
        let invalid: [UInt8] = [0x0A, 0x01, 0xFF]
        #expect(throws: WireDecodingError.self) { try invalid.withUnsafeBytes { try V1.Settings.json(fromBinary: $0) } }
        #expect(throws: WireDecodingError.self) {
            try canonical.withUnsafeBytes { try V1.Settings.json(fromBinary: $0, maxBytes: canonical.count - 1) }
        }
    }

    @Test("nesting deeper than the decoder allows is given up, not recursed into")
    func depth() {
        // The schema has no recursive message, so the guard is checked on a chain of tables, each holding the
        // one before it.
        var schemas = [WireSchema(name: "test.Leaf", fields: [])]
        for level in 1...WireValidator.maxDepth + 2 {
            let field = WireSchema.Field(
                number: 1, name: "inner", kind: .message(schemas[level - 1]),
                json: .init(key: #""inner":"#, form: .message, cardinality: .optionalMessage, position: 0)
            )
            schemas.append(WireSchema(name: "test.Node\(level)", fields: [field]))
        }
        func nested(_ levels: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            for _ in 0..<levels {
                var outer: [UInt8] = [0x0A]
                Varint.append(UInt64(bytes.count), to: &outer)
                bytes = outer + bytes
            }
            return bytes
        }
        let deepest = schemas[WireValidator.maxDepth + 2]
        #expect(nested(WireValidator.maxDepth).withUnsafeBytes { WireJSON.json($0, schema: deepest) } != nil)
        #expect(nested(WireValidator.maxDepth + 1).withUnsafeBytes { WireJSON.json($0, schema: deepest) } == nil)
    }
}
