import CoinWatchModel

/// Broken copies of a valid message, for readers that must refuse them or read them as a reference does.
enum MessageMutations {
    /// Bytes that change a JSON message's structure when they land somewhere new.
    static let structural: [UInt8] = Array(#"{}[]":,\ -.0e9tfnux"#.utf8) + [0x01, 0x7F, 0xC3]

    /// Every way of changing one byte position: cut the message short there, drop the byte, put each of
    /// `structural` in its place, and insert each before it.
    static func everyPosition(of message: String) -> [[UInt8]] {
        let bytes = Array(message.utf8)
        var mutations: [[UInt8]] = []
        for position in 0...bytes.count {
            mutations.append(Array(bytes[..<position]))
            for byte in structural {
                var inserted = bytes
                inserted.insert(byte, at: position)
                mutations.append(inserted)
            }
            guard position < bytes.count else { continue }
            var dropped = bytes
            dropped.remove(at: position)
            mutations.append(dropped)
            for byte in structural where byte != bytes[position] {
                var replaced = bytes
                replaced[position] = byte
                mutations.append(replaced)
            }
        }
        return mutations
    }

    /// `count` random edits of `message`: each changes, inserts, drops or repeats a few bytes or a span.
    static func random(of message: String, count: Int, seed: UInt64) -> [[UInt8]] {
        var random = SplitMix64(seed: seed)
        let bytes = Array(message.utf8)
        return (0..<count).map { _ in
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0...mutated.count, using: &random)
                let byte = structural.randomElement(using: &random)!
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where position < mutated.count: mutated[position] = byte
                case 1: mutated.insert(byte, at: position)
                case 2 where position < mutated.count: mutated.remove(at: position)
                default:
                    let end = min(mutated.count, position + Int.random(in: 1...12, using: &random))
                    mutated.insert(contentsOf: mutated[position..<end], at: position)
                }
            }
            return mutated
        }
    }
}
