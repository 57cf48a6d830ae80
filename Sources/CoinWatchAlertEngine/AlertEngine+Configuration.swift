public import CoinWatchModel

extension AlertEngine {
    /// The hysteresis band, and the index tuning the tests use.
    public struct Configuration: Hashable, Sendable {
        /// The fraction `h` by which the price must come back past a fired threshold before the side
        /// re-arms: an `above A` side re-arms at a price ≤ A × (1 − h), a `below B` side at a price
        /// ≥ B × (1 + h). Zero re-arms as soon as the price is strictly back on the near side.
        public let hysteresis: ExactDecimal
        let aboveFactor: UnitFactor
        let belowFactor: UnitFactor
        let chunkSize: Int

        /// Half a percent: wide enough that a price hovering at a round-number threshold does not
        /// fire on every wobble, narrow enough that a real move away and back alerts again.
        public static let standard = Configuration(checkedHysteresisMantissa: 5, scale: 3, chunkSize: 256)

        /// - Throws: `invalidConfiguration` unless `0 ≤ hysteresis < 1`.
        public init(hysteresis: ExactDecimal) throws(AlertEngineError) {
            try self.init(hysteresis: hysteresis, chunkSize: 256)
        }

        init(hysteresis: ExactDecimal, chunkSize: Int) throws(AlertEngineError) {
            guard !hysteresis.isNegative, hysteresis < ExactDecimal(1) else {
                throw AlertEngineError(
                    code: .invalidConfiguration,
                    message: "hysteresis must be at least 0 and below 1 (got \(hysteresis))"
                )
            }
            self.init(checkedHysteresisMantissa: hysteresis.mantissa, scale: hysteresis.scale, chunkSize: chunkSize)
        }

        /// `mantissa × 10^(−scale)` must already be in `0 ..< 1`.
        private init(checkedHysteresisMantissa mantissa: Int64, scale: Int, chunkSize: Int) {
            hysteresis = ExactDecimal(mantissa: mantissa, scale: scale) ?? .zero
            let one = PriceUnits.powersOfTen[hysteresis.scale]
            let h = Int128(hysteresis.mantissa)
            aboveFactor = UnitFactor(numerator: one - h, denominator: one)
            belowFactor = UnitFactor(numerator: one + h, denominator: one)
            self.chunkSize = chunkSize
        }

        /// The price at which a fired side re-arms, for showing to a person ("alerts again after the
        /// price falls to 63929.2475"): `threshold × (1 − h)` rounded down for `above`,
        /// `threshold × (1 + h)` rounded up for `below`. The engine additionally requires the price to
        /// be strictly back on the near side of the threshold, which only matters when `h` is zero.
        ///
        /// - Throws: the arithmetic overflow for a threshold near the largest representable value.
        public func reArmBoundary(
            direction: AlertDirection, threshold: ExactDecimal
        ) throws(DecimalArithmeticError) -> ExactDecimal {
            switch direction {
            case .above:
                return try threshold.multiplied(by: ExactDecimal(1).subtracting(hysteresis), rounding: .down)
            case .below:
                return try threshold.multiplied(by: ExactDecimal(1).adding(hysteresis), rounding: .up)
            }
        }
    }
}
