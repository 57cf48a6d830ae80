import CoinWatchModel
/// Seeded mutations of valid encodings: the inputs a fuzzer would try, reproducible run to run.
struct Mutator {
    private var rng: SeededGenerator
    private let seeds: [[UInt8]]

    init(seed: UInt64, seeds: [[UInt8]]) {
        precondition(!seeds.isEmpty)
        rng = SeededGenerator(seed: seed)
        self.seeds = seeds
    }

    private mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &rng)
    }

    private mutating func seed() -> [UInt8] {
        seeds[int(0...seeds.count - 1)]
    }

    private mutating func randomBytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    /// A varint-encoded value, often an absurd one.
    private mutating func varint() -> [UInt8] {
        let values: [UInt64] = [0, 1, 127, 128, 0x7FFF_FFFF, 0xFFFF_FFFE, 0xFFFF_FFFF, 1 << 32, .max, rng.next()]
        var value = values[int(0...values.count - 1)]
        var out: [UInt8] = []
        repeat {
            out.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
            value >>= 7
        } while value != 0
        return out
    }

    /// Field-shaped garbage: plausible tags (known and unknown numbers, all wire types) with random lengths.
    private mutating func randomFields() -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<int(1...6) {
            let number = [1, 2, 3, 4, 5, 10, 11, 15, 16, 99, 536_870_911][int(0...10)]
            let tag = UInt64(number) << 3 | UInt64(int(0...7))
            var value = tag
            repeat {
                out.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
                value >>= 7
            } while value != 0
            switch tag & 7 {
            case 0: out += varint()
            case 1: out += randomBytes(int(0...8))
            case 2: out += varint() + randomBytes(int(0...12))
            case 5: out += randomBytes(int(0...4))
            default: break
            }
        }
        return out
    }

    /// One mutated input: one (mostly) to three stacked mutations of a seed, or fresh garbage.
    mutating func next() -> [UInt8] {
        switch int(0...9) {
        case 0: return randomBytes(int(0...64))
        case 1: return randomFields()
        default: break
        }
        var bytes = seed()
        for _ in 0..<(int(0...9) < 6 ? 1 : int(2...3)) {
            mutate(&bytes)
        }
        return bytes
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        let position = bytes.isEmpty ? 0 : int(0...bytes.count - 1)
        switch int(0...9) {
        case 0 where !bytes.isEmpty:  // flip bits
            for _ in 0..<int(1...4) {
                bytes[int(0...bytes.count - 1)] ^= UInt8(1) << UInt8(int(0...7))
            }
        case 1 where !bytes.isEmpty:  // interesting byte values
            bytes[position] = [0x00, 0x01, 0x7F, 0x80, 0xC0, 0xED, 0xF4, 0xFF][int(0...7)]
        case 2:  // truncate
            bytes.removeSubrange(int(0...bytes.count)...)
        case 3:  // insert random bytes
            bytes.insert(contentsOf: randomBytes(int(1...8)), at: int(0...bytes.count))
        case 4 where !bytes.isEmpty:  // delete a range
            let end = min(bytes.count, position + int(1...8))
            bytes.removeSubrange(position..<end)
        case 5:  // splice with another valid encoding (of any type)
            let other = seed()
            bytes = Array(bytes[..<int(0...bytes.count)]) + Array(other[int(0...other.count)...])
        case 6 where !bytes.isEmpty:  // duplicate a chunk
            let end = min(bytes.count, position + int(1...16))
            bytes.insert(contentsOf: bytes[position..<end], at: int(0...bytes.count))
        case 7:  // plant an absurd length or varint
            bytes.insert(contentsOf: varint(), at: int(0...bytes.count))
        case 8:  // plant field-shaped garbage
            bytes.insert(contentsOf: randomFields(), at: int(0...bytes.count))
        default:  // concatenate another encoding: valid protobuf merges
            bytes += seed()
        }
    }
}
