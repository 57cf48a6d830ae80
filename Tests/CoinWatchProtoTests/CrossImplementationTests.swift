import CoinWatchProto
import Testing

/// Checks the Swift layer against protoc, the reference C++ implementation, in both directions.
@Suite("Cross-implementation (protoc)")
struct CrossImplementationTests {
    @Test(
        "protoc's encoding decodes to the expected value, and protoc reads Swift's encoding",
        arguments: crossFixtures
    )
    func fixture(_ fixture: CrossFixture) async throws {
        try await check(fixture.expected, text: fixture.text, bytesMatch: !fixture.hasEmptyMapString)
    }

    @Test("every message type of the schema has at least one fixture")
    func everyMessageTypeHasAFixture() {
        let covered = Set(crossFixtures.map(\.protoName))
        let missing = V1.messageTypes.map { $0.protoName }.filter { !covered.contains($0) }
        #expect(
            missing.isEmpty,
            "\(missing.count) message types have no fixture in crossFixtures: \(missing.joined(separator: ", "))"
        )
    }

    private func check<M: WireMessage>(_ expected: M, text: String, bytesMatch: Bool) async throws {
        let protocBytes = try await Protoc.encode(M.protoName, text: text)
        #expect(try M(serializedBytes: protocBytes) == expected)

        let swiftBytes = expected.serializedBytes()
        let swiftText = try await Protoc.decode(M.protoName, bytes: swiftBytes)
        let protocText = try await Protoc.decode(M.protoName, bytes: protocBytes)
        #expect(swiftText == protocText)
        if bytesMatch {
            #expect(swiftBytes == protocBytes, "both sides encode deterministically in field and key order")
        } else {
            #expect(swiftBytes != protocBytes, "the fixture claims a known byte difference")
        }
    }

    @Test("random filled instances survive protoc --decode and --encode", arguments: MessageType.all)
    func randomInstances(_ messageType: MessageType) async throws {
        try await randomInstances(messageType.type, seed: messageType.seed)
    }

    private func randomInstances<M: RandomMessage>(_ type: M.Type, seed: UInt64) async throws {
        var g = RandomValues(seed: seed ^ 0xC0FFEE)
        for value in M.filledSamples(using: &g) + [M.random(using: &g, filled: false, depth: 0)] {
            let bytes = value.serializedBytes()
            let text = try await Protoc.decode(M.protoName, bytes: bytes)
            let reencoded = try await Protoc.encode(M.protoName, text: text)
            #expect(try M(serializedBytes: reencoded) == value, "via text:\n\(text)")
        }
    }

    @Test("protoc is available (CI installs it; these tests fail rather than skip without it)")
    func protocIsAvailable() throws {
        _ = try Protoc.executable()
    }
}
