import CoinWatchProto
import Testing

/// Random and mutated inputs into every decoder: each decodes (and then re-encodes to the same value) or throws
/// a WireDecodingError naming the type; nothing crashes. Seeded, so a failure reproduces.
/// Serialized, and yielding as they go: these are long CPU-bound loops, and run in parallel they
/// would hold every thread of the task pool the rest of the suite shares.
@Suite("Decoder robustness", .serialized)
struct RobustnessTests {
    /// Inputs per message type: 32 types × 4,000 = 128,000 mutated inputs, each fed to the decoder of the
    /// type it was derived from and to one other decoder, so every decoder sees about 8,000.
    static let inputsPerType = 4_000

    @Test("mutated encodings never crash a decoder", arguments: MessageType.all)
    func mutatedInputs(_ messageType: MessageType) async throws {
        var g = RandomValues(seed: messageType.seed ^ 0xF022)
        var seeds = messageType.type.filledSamples(using: &g).map { $0.serializedBytes() }
        for i in 0..<16 {
            seeds.append(messageType.type.random(using: &g, filled: i % 4 == 0, depth: 0).serializedBytes())
        }
        for other in allMessageTypes.prefix(8) {
            seeds.append(other.random(using: &g, filled: true, depth: 0).serializedBytes())
        }
        var mutator = Mutator(seed: messageType.seed, seeds: seeds)
        var tally = Tally()
        for i in 0..<Self.inputsPerType {
            if i % 500 == 0 { await Task.yield() }
            let input = mutator.next()
            tally.add(decode(messageType.type, input))
            let other = allMessageTypes[(i &* 7 &+ Int(messageType.seed % 31)) % allMessageTypes.count]
            _ = decode(other, input)
        }
        #expect(tally.decoded > 0 && tally.failures > 0, "both outcomes must occur: \(tally)")
        #expect(tally.decoded + tally.failures == Self.inputsPerType)
    }

    /// 100,000 inputs, mutated from valid encodings of every type and plain random bytes, all fed to this one
    /// decoder: every decoder sees at least 100,000 hostile inputs.
    static let inputsPerDecoder = 100_000

    @Test("100,000 mutated inputs into every decoder: each decodes or throws, none crashes", arguments: MessageType.all)
    func hundredThousandInputs(_ messageType: MessageType) async throws {
        var g = RandomValues(seed: messageType.seed ^ 0x1_0000)
        var seeds: [[UInt8]] = []
        for other in allMessageTypes {
            seeds.append(other.random(using: &g, filled: true, depth: 0).serializedBytes())
        }
        var mutator = Mutator(seed: messageType.seed ^ 0x100, seeds: seeds)
        var decoded = 0
        for round in 0..<Self.inputsPerDecoder {
            if round % 1000 == 0 { await Task.yield() }
            do {
                _ = try messageType.type.init(serializedBytes: mutator.next())
                decoded += 1
            } catch {
                if error.typeName != messageType.type.protoName {
                    Issue.record("\(messageType.type.protoName): error does not name the type: \(error)")
                }
            }
        }
        #expect(decoded < Self.inputsPerDecoder)
    }

    struct Tally: CustomStringConvertible {
        var decoded = 0
        var failures = 0
        var codes: [String: Int] = [:]

        mutating func add(_ outcome: WireDecodingError.Code?) {
            if let outcome {
                failures += 1
                codes[outcome.description, default: 0] += 1
            } else {
                decoded += 1
            }
        }

        var description: String { "decoded \(decoded), failed \(failures) \(codes)" }
    }

    /// Decodes `input`; checks what a success or a failure must satisfy; returns the failure's code.
    private func decode<M: WireMessage>(_ type: M.Type, _ input: [UInt8]) -> WireDecodingError.Code? {
        do {
            let value = try M(serializedBytes: input)
            let again = try M(serializedBytes: value.serializedBytes())
            if again != value {
                Issue.record("\(M.protoName): re-encoding changed \(value) into \(again); input \(input)")
            }
            return nil
        } catch {
            if error.typeName != M.protoName || !error.message.hasPrefix(M.protoName) {
                Issue.record("\(M.protoName): error does not name the type: \(error)")
            }
            return error.code
        }
    }
}
