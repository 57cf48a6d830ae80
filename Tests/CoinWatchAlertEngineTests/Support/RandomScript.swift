@testable import CoinWatchAlertEngine
import CoinWatchModel

/// One step of a randomized run: a settings change or a tick.
enum ScriptStep: CustomStringConvertible {
    case set(DeviceID, Symbol, AlertRule)
    case remove(DeviceID, Symbol)
    case removeDevice(DeviceID)
    case tick(Symbol, ExactDecimal)

    var description: String {
        switch self {
        case .set(let device, let symbol, let rule):
            "set \(device) \(symbol) below \(rule.below?.description ?? "-") above \(rule.above?.description ?? "-")"
        case .remove(let device, let symbol): "remove \(device) \(symbol)"
        case .removeDevice(let device): "removeDevice \(device)"
        case .tick(let symbol, let price): "tick \(symbol) \(price)"
        }
    }
}

/// Generates seeded random scripts that aim at the edges: many devices sharing thresholds, prices
/// exactly at thresholds and at hysteresis boundaries (and one unit either side), repeated prices,
/// large jumps, rules re-saved unchanged, changed on one side, removed and re-added.
struct RandomScript {
    let devices: [DeviceID]
    let symbols: [Symbol]
    let hysteresis: ExactDecimal
    private var random: SplitMix64
    private var rules: [Symbol: [DeviceID: AlertRule]] = [:]
    private var prices: [Symbol: ExactDecimal] = [:]

    init(seed: UInt64, deviceCount: Int = 200, symbols: [String] = ["BTC", "ETH", "SOL"], hysteresis: ExactDecimal) {
        random = SplitMix64(seed: seed)
        devices = (0..<deviceCount).map { device("dev-\($0)") }
        self.symbols = symbols.map(symbol)
        self.hysteresis = hysteresis
    }

    private mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

    private mutating func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }

    /// A threshold on a coarse grid around 100 (so devices share them), sometimes with more digits.
    private mutating func threshold() -> ExactDecimal? {
        switch random.next() % 10 {
        case 0: return nil
        case 1: return .zero
        case 2: return ExactDecimal(mantissa: 1_000_000 + Int64(random.next() % 200_001) - 100_000, scale: 4)
        default: return ExactDecimal(mantissa: 10_000 + 25 * (Int64(random.next() % 81) - 40), scale: 2)
        }
    }

    private func activeThresholds(_ symbol: Symbol) -> [ExactDecimal] {
        (rules[symbol] ?? [:]).values.flatMap { [$0.threshold(.above), $0.threshold(.below)].compactMap { $0 } }
    }

    private mutating func price(_ symbol: Symbol) -> ExactDecimal {
        let last = prices[symbol] ?? dec("100")
        let thresholds = activeThresholds(symbol)
        let unit = dec("0.00001")
        var candidate: ExactDecimal?
        switch random.next() % 20 {
        case 0..<6:
            // A small walk, at 4 or 5 decimals.
            let step = ExactDecimal(mantissa: Int64(random.next() % 300_001) - 150_000, scale: 5) ?? .zero
            candidate = try? last.adding(step)
        case 6..<10 where !thresholds.isEmpty:
            candidate = pick(thresholds)
        case 10..<14 where !thresholds.isEmpty:
            // A hysteresis boundary, or one unit either side of it.
            let threshold = pick(thresholds)
            let factor = chance(50)
                ? try? ExactDecimal(1).subtracting(hysteresis) : try? ExactDecimal(1).adding(hysteresis)
            if let factor, let boundary = try? threshold.multiplied(by: factor, rounding: .down) {
                switch random.next() % 3 {
                case 0: candidate = boundary
                case 1: candidate = try? boundary.adding(unit)
                default: candidate = try? boundary.subtracting(unit)
                }
            }
        case 14..<16:
            candidate = last
        default:
            // A large jump anywhere in 80 ... 120.
            candidate = ExactDecimal(mantissa: 8_000 + Int64(random.next() % 4_001), scale: 2)
        }
        guard let candidate, candidate > .zero else { return last }
        return candidate
    }

    private mutating func tick(_ symbol: Symbol) -> ScriptStep {
        let price = price(symbol)
        prices[symbol] = price
        return .tick(symbol, price)
    }

    mutating func next() -> ScriptStep {
        let roll = random.next() % 100
        let symbol = pick(symbols)
        let device = pick(devices)
        switch roll {
        case 0..<45:
            return tick(symbol)
        case 45..<70:
            let rule = AlertRule(below: threshold(), above: threshold())
            rules[symbol, default: [:]][device] = rule.isOff ? nil : rule
            return .set(device, symbol, rule)
        case 70..<80:
            // Re-save an existing rule unchanged, or change one side only.
            guard let (existingDevice, existing) = rules[symbol]?.randomElement(using: &random) else {
                return tick(symbol)
            }
            var rule = existing
            if chance(50) {
                if chance(50) { rule.above = threshold() } else { rule.below = threshold() }
            }
            rules[symbol]?[existingDevice] = rule.isOff ? nil : rule
            return .set(existingDevice, symbol, rule)
        case 80..<95:
            rules[symbol]?[device] = nil
            return .remove(device, symbol)
        default:
            for symbol in symbols { rules[symbol]?[device] = nil }
            return .removeDevice(device)
        }
    }
}
