import CoinWatchProto
import Foundation
import Testing

@Suite("Round trips")
struct RoundTripTests {
    @Test("the generated type list matches the schema's messages")
    func typeListMatchesSchema() throws {
        var declared: [String] = []
        for file in Protoc.protoFiles {
            let text = try String(
                contentsOf: Protoc.repositoryRoot.appendingPathComponent("proto").appendingPathComponent(file),
                encoding: .utf8
            )
            for line in text.split(separator: "\n") where line.hasPrefix("message ") {
                declared.append("coinwatch.v1." + line.dropFirst("message ".count).prefix { $0 != " " })
            }
        }
        #expect(declared.count == 54)
        #expect(Set(allMessageTypes.map { $0.protoName }) == Set(declared))
        #expect(allMessageTypes.count == declared.count)
        // The library's public list (what the message fuzzer indexes) is the same, in the same order.
        #expect(V1.messageTypes.map { $0.protoName } == allMessageTypes.map { $0.protoName })
    }

    @Test("filled instances, one per oneof case, round-trip", arguments: MessageType.all)
    func filledInstances(_ messageType: MessageType) throws {
        try filledInstances(messageType.type, seed: messageType.seed)
    }

    private func filledInstances<M: RandomMessage>(_ type: M.Type, seed: UInt64) throws {
        var g = RandomValues(seed: seed)
        let samples = M.filledSamples(using: &g)
        #expect(samples.count == max(M.oneofCaseCount, 1))
        for sample in samples {
            #expect(sample != M(), "a filled sample must differ from the default")
            #expect(!sample.serializedBytes().isEmpty)
            try expectRoundTrip(sample)
        }
    }

    @Test("sparse random instances round-trip", arguments: MessageType.all)
    func randomInstances(_ messageType: MessageType) throws {
        try randomInstances(messageType.type, seed: messageType.seed)
    }

    private func randomInstances<M: RandomMessage>(_ type: M.Type, seed: UInt64) throws {
        var g = RandomValues(seed: seed ^ 0x5EED)
        for _ in 0..<200 {
            try expectRoundTrip(M.random(using: &g, filled: false, depth: 0))
        }
        try expectRoundTrip(M())
        #expect(M().serializedBytes().isEmpty, "defaults encode to nothing in proto3")
        #expect(try M(serializedBytes: [UInt8]()) == M())
    }

    @Test("an empty sub-message stays distinct from an absent one")
    func subMessagePresence() throws {
        let rule = V1.AlertRule(below: V1.Decimal(), above: nil)
        #expect(rule.serializedBytes() == [0x0A, 0x00])
        let decoded = try V1.AlertRule(serializedBytes: rule.serializedBytes())
        #expect(decoded.below == V1.Decimal())
        #expect(decoded.above == nil)
        #expect(try V1.AlertRule(serializedBytes: [UInt8]()).below == nil)
    }

    @Test("every oneof case is kept, empty and zero-valued ones included")
    func oneofPresence() throws {
        let empty = V1.Frame(kind: .hello(V1.Hello()))
        #expect(empty.serializedBytes() == [0x0A, 0x00])
        #expect(try V1.Frame(serializedBytes: empty.serializedBytes()) == empty)
        #expect(try V1.Frame(serializedBytes: [UInt8]()).kind == nil)

        let zero = V1.SaveSettingsRequest(precondition: .expectedVersion(0))
        #expect(zero.serializedBytes() == [0x20, 0x00])
        #expect(try V1.SaveSettingsRequest(serializedBytes: zero.serializedBytes()).precondition == .expectedVersion(0))
        #expect(V1.SaveSettingsRequest().serializedBytes().isEmpty)
    }

    @Test("map entries are encoded sorted by key bytes, whatever the insertion order")
    func mapOrder() throws {
        var forward: [String: String] = [:]
        var backward: [String: String] = [:]
        let keys = ["b", "a", "é", "Z", "aa", ""]
        for key in keys { forward[key] = "v" + key }
        for key in keys.reversed() { backward[key] = "v" + key }
        let one = V1.End(trailers: forward).serializedBytes()
        #expect(one == V1.End(trailers: backward).serializedBytes())

        let small = V1.End(trailers: ["b": "2", "a": "1"]).serializedBytes()
        let entryA: [UInt8] = [0x1A, 0x06, 0x0A, 0x01, 0x61, 0x12, 0x01, 0x31]
        let entryB: [UInt8] = [0x1A, 0x06, 0x0A, 0x01, 0x62, 0x12, 0x01, 0x32]
        #expect(small == entryA + entryB)
        #expect(try V1.End(serializedBytes: one).trailers == forward)
    }

    @Test("enums are open: unnamed values survive and print as numbers")
    func openEnums() throws {
        for raw: Int32 in [99, -5, .max, .min] {
            let status = V1.Status(code: V1.Status.Code(rawValue: raw), message: "x")
            try expectRoundTrip(status)
            #expect(status.code.description == String(raw))
        }
        #expect(V1.Status.Code.invalidArgument.description == "INVALID_ARGUMENT")
        #expect(V1.Direction.above.rawValue == 1)
        #expect(V1.Direction.knownValues == [.unspecified, .above, .below])
        #expect(V1.HealthCheckResponse.ServingStatus.notServing.rawValue == 2)
        #expect(V1.Status.Code.knownValues.count == 17)
    }

    @Test("large messages spill out of the stack scratch buffer intact")
    func largeMessages() throws {
        var metadata: [String: String] = [:]
        for i in 0..<500 { metadata["key-\(i)"] = String(repeating: "ü", count: i % 40) }
        let call = V1.Call(
            callID: 7, method: String(repeating: "m", count: 5000), timeoutMs: 1, metadata: metadata,
            payload: (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        )
        try expectRoundTrip(V1.Frame(kind: .call(call)))
        let ticks = (0..<2000).map {
            V1.Tick(symbol: "S\($0)", price: V1.Decimal(mantissa: Int64($0) - 1000), timeMs: 1)
        }
        try expectRoundTrip(V1.PublishPricesRequest(ticks: ticks))
    }

    @Test("services name their methods by path")
    func services() {
        #expect(V1.CoinWatch.getSettings.path == "coinwatch.v1.CoinWatch/GetSettings")
        #expect(!V1.CoinWatch.getSettings.isServerStreaming)
        #expect(V1.CoinWatch.streamPrices.isServerStreaming)
        #expect(!V1.CoinWatch.streamPrices.isClientStreaming)
        #expect(V1.CoinWatch.methodPaths.count == 10)
        #expect(V1.Health.check.path == "coinwatch.v1.Health/Check")
        #expect(V1.Health.name == "coinwatch.v1.Health")
    }
}
