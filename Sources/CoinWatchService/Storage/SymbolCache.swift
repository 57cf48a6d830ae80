import CoinWatchModel

/// `Symbol`s by their stored spelling, for loads that meet the same few symbols millions of times.
struct SymbolCache {
    private var entries: [(bytes: [UInt8], symbol: Symbol)] = []

    /// The symbol spelled by `bytes`, or `nil` when they are not 2–10 of `A-Z 0-9`.
    mutating func symbol(_ bytes: UnsafeRawBufferPointer) -> Symbol? {
        for entry in entries where entry.bytes.elementsEqual(bytes) { return entry.symbol }
        guard (2...10).contains(bytes.count),
              bytes.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }),
              let symbol = try? Symbol(validating: String(decoding: bytes, as: UTF8.self))
        else {
            return nil
        }
        if entries.count < 64 { entries.append((Array(bytes), symbol)) }
        return symbol
    }
}
