@testable import CoinWatchProto
import Testing

/// The validator's two walks: the one over plain shape tables that every request takes, and the one over the
/// schema's fields that names the field when something is wrong. They must accept exactly the same inputs: an input
/// the quick walk let through that the naming walk would refuse would reach protobuf-c unchecked.
@Suite("Wire validator", .serialized)
struct WireValidatorTests {
    static let inputsPerType = 3_000

    @Test("the table walk and the naming walk accept exactly the same mutated inputs", arguments: MessageType.all)
    func walksAgree(_ messageType: MessageType) async throws {
        let schema = try #require((messageType.type as? any WireSchemaDescribed.Type)?.wireSchema)
        let shapes = try #require(schema.shapes, "every schema of ours has numbers small enough for a table")
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
                let quick = WireValidator.isValid(bytes, from: 0, to: bytes.count, UnsafeBufferPointer(shapes.shapes), depth: 0)
                let naming: Bool
                do {
                    try WireValidator.walk(bytes, from: 0, to: bytes.count, schema: schema, depth: 0)
                    naming = true
                } catch {
                    naming = false
                }
                if quick != naming {
                    Issue.record("\(schema.name): table walk \(quick), naming walk \(naming) for \(input)")
                }
                if naming { accepted += 1 } else { refused += 1 }
            }
        }
        #expect(accepted > 0 && refused > 0, "both outcomes must occur: \(accepted) accepted, \(refused) refused")
    }
}
