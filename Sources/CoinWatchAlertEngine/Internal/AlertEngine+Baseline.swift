package import CoinWatchModel

/// One direction's rule sides on one symbol as flat arrays: the state the benchmark's brute-force baseline
/// (`CoinWatchAlertBench`) scans. The same units, keys and phases the index uses, so a scan over them does the
/// engine's work minus the index. Package access only: not part of the engine's API.
package struct BaselineSide: Sendable {
    package let symbol: Symbol
    package let direction: AlertDirection
    /// Every side's threshold key, on the direction's oriented axis (`AlertEngine.orientedUnits`).
    package let keys: [Int128]
    /// Every side's re-arm key on the same axis.
    package let reArmKeys: [Int128]
    package let phases: [SidePhase]
    package let generations: [UInt64]
}

extension AlertEngine {
    /// Every symbol's rule sides as `BaselineSide`s, copied.
    package func baselineSides() -> [BaselineSide] {
        books.flatMap { book in
            AlertDirection.allCases.map { direction in
                let side = book.side(direction)
                return BaselineSide(
                    symbol: book.symbol,
                    direction: direction,
                    keys: side.slots.map(\.key),
                    reArmKeys: side.slots.map { side.reArmKey(forKey: $0.key) },
                    phases: side.slots.map(\.phase),
                    generations: side.slots.map(\.generation)
                )
            }
        }
    }

    /// `price` in the index's units on `direction`'s oriented axis: as-is for `above`, negated for `below`.
    package static func orientedUnits(_ price: ExactDecimal, _ direction: AlertDirection) -> Int128 {
        let units = PriceUnits.units(price)
        return direction == .above ? units : -units
    }
}
