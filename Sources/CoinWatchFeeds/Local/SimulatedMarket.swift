public import CoinWatchModel
public import CoinWatchService
import Foundation

/// One instrument of the simulated market: where its price starts, how finely it is quoted, how much it moves.
public struct SimulatedInstrument: Sendable, Hashable {
    public var symbol: Symbol
    /// The starting price; its digits after the point must fit `decimals`.
    public var start: ExactDecimal
    /// Digits after the point the price is quoted with (BTC 2, DOGE 5), as exchanges quote them.
    public var decimals: Int
    /// Standard deviation of one step, relative to the price (0.0001 = 1 basis point).
    public var volatility: Double

    public init(symbol: Symbol, start: ExactDecimal, decimals: Int, volatility: Double) {
        self.symbol = symbol
        self.start = start
        self.decimals = decimals
        self.volatility = volatility
    }

    /// BTC, ETH, SOL, XRP, DOGE, ADA, LTC and AVAX at plausible price levels and exchange precision.
    public static let defaults: [SimulatedInstrument] = [
        make("BTC", "64250.00", 2, 0.0001),
        make("ETH", "3450.25", 2, 0.00012),
        make("SOL", "145.37", 2, 0.0002),
        make("XRP", "0.5234", 4, 0.00015),
        make("DOGE", "0.16235", 5, 0.0002),
        make("ADA", "0.4521", 4, 0.00015),
        make("LTC", "72.45", 2, 0.00015),
        make("AVAX", "28.31", 2, 0.0002),
    ]

    private static func make(_ symbol: String, _ start: String, _ decimals: Int, _ volatility: Double) -> Self {
        // The literals above are valid; a typo fails every test that uses the defaults.
        SimulatedInstrument(
            symbol: try! Symbol(validating: symbol), start: ExactDecimal(start)!, decimals: decimals,
            volatility: volatility)
    }
}

/// A seedable random walk over integer price units: the same seed yields the same prices, and every price is an
/// exact decimal at the instrument's precision (the walk never round-trips a price through `Double`).
public struct SimulatedMarket: Sendable {
    /// Pull back toward the starting price per step, so a long run stays at realistic levels.
    static let reversion = 0.0001

    private struct Walk: Sendable {
        let instrument: SimulatedInstrument
        /// The price in units of 10^-decimals.
        var units: Int64
        let startUnits: Int64
    }

    private var random: SplitMix64
    private var walks: [Walk]

    /// - Throws: when an instrument's start price needs more digits than its `decimals`, or is not positive.
    public init(seed: UInt64, instruments: [SimulatedInstrument] = SimulatedInstrument.defaults) throws(FeedError) {
        random = SplitMix64(seed: seed)
        walks = []
        for instrument in instruments {
            guard (0...ExactDecimal.maxScale).contains(instrument.decimals),
                  instrument.start.scale <= instrument.decimals, instrument.start > .zero
            else {
                throw FeedError(
                    code: .invalidSpec,
                    message: "simulated \(instrument.symbol): start price \(instrument.start) must be positive with at "
                        + "most \(instrument.decimals) decimals (0–18)")
            }
            var units = instrument.start.mantissa
            for _ in instrument.start.scale..<instrument.decimals {
                let (next, overflow) = units.multipliedReportingOverflow(by: 10)
                guard !overflow else {
                    throw FeedError(
                        code: .invalidSpec, message: "simulated \(instrument.symbol): start price too large")
                }
                units = next
            }
            walks.append(Walk(instrument: instrument, units: units, startUnits: units))
        }
    }

    public var symbols: [Symbol] { walks.map(\.instrument.symbol) }

    /// Advances every instrument one step and returns the new prices, stamped `timeMs`.
    public mutating func step(timeMs: Int64) -> [PriceTick] {
        var ticks: [PriceTick] = []
        ticks.reserveCapacity(walks.count)
        for index in walks.indices {
            let walk = walks[index]
            let gaussian = nextGaussian()
            let move = Double(walk.units) * walk.instrument.volatility * gaussian
                + Self.reversion * Double(walk.startUnits - walk.units)
            // Bounded to ±10 % of the price per step, so the conversion to Int64 can never trap.
            let limit = Double(walk.units) / 10
            let step = Int64(min(max(move, -limit), limit).rounded())
            let units = max(1, walk.units + step)
            walks[index].units = units
            ticks.append(PriceTick(
                symbol: walk.instrument.symbol,
                price: ExactDecimal(mantissa: units, scale: walk.instrument.decimals)!,
                timeMs: timeMs))
        }
        return ticks
    }

    /// A standard normal variate (Box–Muller).
    private mutating func nextGaussian() -> Double {
        let u1 = random.nextUnitInterval()
        let u2 = random.nextUnitInterval()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}
