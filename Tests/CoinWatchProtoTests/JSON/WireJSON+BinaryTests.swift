@testable import CoinWatchProto
import Testing

/// A plain JSON request encoded as it is read must be the bytes decoding and packing give, and everything else
/// must be left to the decoder (nil).
@Suite("JSON requests straight to the wire", .serialized)
struct WireJSONBinaryTests {
    private func encoded<M: WireMessage>(
        _: M.Type, _ json: [UInt8], options: JSONDecodingOptions = .init()
    ) -> [UInt8]? {
        guard let schema = (M.self as? any WireSchemaDescribed.Type)?.wireSchema else { return nil }
        return json.withUnsafeBytes { WireJSON.binary($0, schema: schema, options: options) }
    }

    private func encoded<M: WireMessage>(_ type: M.Type, _ json: String, options: JSONDecodingOptions = .init())
        -> [UInt8]?
    {
        encoded(type, Array(json.utf8), options: options)
    }

    /// What the decoder's path gives: the packed encoding, or nil for an error.
    private func decoded<M: JSONMessage>(_: M.Type, _ json: String, options: JSONDecodingOptions = .init())
        -> [UInt8]?
    {
        (try? M(jsonString: json, options: options))?.serializedBytes()
    }

    @Test("the canonical JSON of random values of every type: encoded as read to the packed bytes, or left",
          arguments: MessageType.all)
    func canonicalDocuments(_ messageType: MessageType) {
        canonicalDocuments(messageType.type, seed: messageType.seed)
    }

    private func canonicalDocuments<M: RandomMessage>(_: M.Type, seed: UInt64) {
        var g = RandomValues(seed: seed ^ 0xB1)
        let values = M.filledSamples(using: &g) + (0..<60).map { _ in M.random(using: &g, filled: false, depth: 0) }
        for value in values {
            let json = value.jsonUTF8()
            guard let binary = encoded(M.self, json) else { continue }
            #expect(binary == value.serializedBytes(), "\(String(decoding: json, as: UTF8.self))")
        }
    }

    @Test("documents of the requests clients send most are encoded as read")
    func commonRequests() throws {
        let documents: [(any JSONMessage.Type, String)] = [
            (V1.GetSettingsRequest.self, #"{"deviceId":"bench-0"}"#),
            (V1.GetSettingsRequest.self, #" { "device_id" : "bench-0" } "#),
            (V1.SaveSettingsRequest.self,
             #"{"deviceId":"d","setRules":{"BTC":{"below":{"mantissa":"50000"},"above":{"mantissa":90000,"scale":2}},"ETH":{}},"removeSymbols":["SOL",""],"expectedVersion":"0"}"#),
            (V1.DeleteSettingsRequest.self, #"{"deviceId":"d","expectedVersion":7}"#),
            // Zeros and empty strings are defaults, left out; a oneof member is written even at its default.
            (V1.SaveSettingsRequest.self,
             #"{"deviceId":"","setRules":{"A":{"below":{"mantissa":"0","scale":0},"above":{"mantissa":0}}},"expectedVersion":0}"#),
            // A map entry and a nested message longer than 127 bytes: their length takes two bytes.
            (V1.SaveSettingsRequest.self, #"{"setRules":{"\#(String(repeating: "K", count: 200))":{"below":{"mantissa":"1"}}}}"#),
            (V1.SaveSettingsRequest.self, #"{"deviceId":"\#(String(repeating: "x", count: 300))","setRules":{"A":{"below":{"mantissa":"-9223372036854775808","scale":4294967295}}}}"#),
        ]
        for (type, json) in documents {
            try check(type, json)
        }
    }

    private func check<M: JSONMessage>(_ type: M.Type, _ json: String) throws {
        let binary = try #require(encoded(type, json), "\(json)")
        #expect(binary == decoded(type, json), "\(json)")
    }

    @Test("what is left to the decoder, which encodes it or refuses it",
          arguments: [
              #"{"expectedVersion":"1","deviceId":"d"}"#,
              #"{"deviceId":"d","device_id":"e"}"#,
              #"{"deviceId":null}"#,
              #"{"deviceId":"a\u0062"}"#,
              #"{"device\u0049d":"a"}"#,
              #"{"expectedVersion":1e3}"#,
              #"{"expectedVersion":"2.0"}"#,
              #"{"expectedVersion":"007"}"#,
              #"{"expectedVersion":-0}"#,
              #"{"expectedVersion":-1}"#,
              #"{"expectedVersion":18446744073709551616}"#,
              #"{"expectedVersion":true}"#,
              #"{"deviceId":5}"#,
              #"{"setRules":{"ETH":{},"BTC":{}}}"#,
              #"{"setRules":{"":{}}}"#,
              #"{"setRules":{"BTC":null}}"#,
              #"{"setRules":{"BTC":{"below":{"scale":4294967296}}}}"#,
              #"{"removeSymbols":"SOL"}"#,
              #"{"removeSymbols":[null]}"#,
              #"{"unknown":1}"#,
              #"{"deviceId":"d"} x"#,
              #"{"deviceId":"d",}"#,
              #"["deviceId"]"#,
          ])
    func leftToTheDecoder(_ json: String) {
        #expect(encoded(V1.SaveSettingsRequest.self, json) == nil, "\(json)")
    }

    @Test("an unknown member is skipped when unknown members are ignored, as the decoder skips it")
    func unknownMembers() throws {
        let json = #"{"deviceId":"d","later":{"x":[1,{"y":null}]},"expectedVersion":"3"}"#
        let options = JSONDecodingOptions(ignoreUnknownFields: true)
        let binary = try #require(encoded(V1.SaveSettingsRequest.self, json, options: options))
        #expect(binary == decoded(V1.SaveSettingsRequest.self, json, options: options))
        #expect(encoded(V1.SaveSettingsRequest.self, json) == nil)
        #expect(decoded(V1.SaveSettingsRequest.self, json) == nil)
    }

    @Test("a document over the size limit or nested too deep is left to the decoder, which refuses it")
    func limits() {
        let json = #"{"deviceId":"d"}"#
        #expect(encoded(V1.GetSettingsRequest.self, json, options: .init(maxBytes: 5)) == nil)
        let deep = #"{"setRules":{"BTC":{"below":{"mantissa":"1"}}}}"#
        #expect(encoded(V1.SaveSettingsRequest.self, deep, options: .init(maxDepth: 3)) == nil)
        #expect(encoded(V1.SaveSettingsRequest.self, deep, options: .init(maxDepth: 4)) != nil)
        #expect(decoded(V1.SaveSettingsRequest.self, deep, options: .init(maxDepth: 3)) == nil)
    }

    @Test("binary(fromJSON:) gives the encoding as read, or the decoder's encoding or error where it is left")
    func publicConversion() throws {
        func binary(_ json: String, _ options: JSONDecodingOptions = .init()) throws(JSONDecodingError) -> [UInt8] {
            let bytes = Array(json.utf8)
            let result = bytes.withUnsafeBytes { buffer in
                Result { () throws(JSONDecodingError) in try V1.SaveSettingsRequest.binary(fromJSON: buffer, options: options) }
            }
            return try result.get()
        }
        let plain = #"{"deviceId":"d","expectedVersion":"2"}"#
        #expect(try binary(plain) == encoded(V1.SaveSettingsRequest.self, plain))
        let reordered = #"{"expectedVersion":"2","deviceId":"d"}"#
        #expect(try binary(reordered) == decoded(V1.SaveSettingsRequest.self, plain))
        let error = #expect(throws: JSONDecodingError.self) { try binary(#"{"deviceId":"d","device_id":"e"}"#) }
        #expect(error?.typeName == V1.SaveSettingsRequest.protoName)
        #expect(throws: JSONDecodingError.self) { try binary(plain, JSONDecodingOptions(maxBytes: 10)) }
    }

    @Test("mutated documents of every type: encoded as read only where the decoder gives the same bytes",
          arguments: MessageType.all)
    func mutatedDocuments(_ messageType: MessageType) async {
        await mutatedDocuments(messageType.type, seed: messageType.seed)
    }

    private func mutatedDocuments<M: RandomMessage>(_: M.Type, seed: UInt64) async {
        var g = RandomValues(seed: seed ^ 0xC4)
        var samples = M.filledSamples(using: &g)
        for _ in 0..<4 { samples.append(M.random(using: &g, filled: false, depth: 0)) }
        for (round, value) in samples.enumerated() {
            if round % 4 == 0 { await Task.yield() }
            let json = value.jsonUTF8()
            for attempt in 0..<300 {
                let mutated = g.mutatedJSON(json)
                let options = JSONDecodingOptions(ignoreUnknownFields: attempt % 2 == 0)
                guard let binary = encoded(M.self, mutated, options: options) else { continue }
                let expected = (try? M(jsonUTF8: mutated, options: options))?.serializedBytes()
                #expect(binary == expected, "\(String(decoding: mutated, as: UTF8.self))")
            }
        }
    }
}
