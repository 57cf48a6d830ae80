import CoinWatchAlertEngine
import CoinWatchModel

/// The obvious alert evaluator — every rule side checked on every tick — over the same state as an
/// engine, as the baseline the engine's index is measured against. Same state machine, same
/// `Int128` units, so the comparison isolates the cost of scanning.
struct BruteForceScanner {
    struct Side {
        let direction: AlertDirection
        var keys: [Int128] = []
        var reArmKeys: [Int128] = []
        var phases: [SidePhase] = []
        var generations: [UInt64] = []
    }

    private(set) var sides: [Symbol: [Side]] = [:]

    /// Copies an engine's current rule sides and states.
    init(copying engine: AlertEngine) {
        for source in engine.baselineSides() {
            sides[source.symbol, default: []].append(
                Side(
                    direction: source.direction, keys: source.keys, reArmKeys: source.reArmKeys,
                    phases: source.phases, generations: source.generations
                )
            )
        }
    }

    /// One tick; returns how many sides fired and re-armed.
    mutating func tick(symbol: Symbol, price: ExactDecimal, clock: UInt64) -> (fired: Int, reArmed: Int) {
        var fired = 0
        var reArmed = 0
        guard var symbolSides = sides.removeValue(forKey: symbol) else { return (0, 0) }
        for which in symbolSides.indices {
            let price = AlertEngine.orientedUnits(price, symbolSides[which].direction)
            let keys = symbolSides[which].keys
            let reArmKeys = symbolSides[which].reArmKeys
            var phases = symbolSides[which].phases
            var generations = symbolSides[which].generations
            symbolSides[which].phases = []
            symbolSides[which].generations = []
            for index in phases.indices {
                switch phases[index] {
                case .armed where price >= keys[index]:
                    phases[index] = .disarmed
                    fired += 1
                case .disarmed where price <= reArmKeys[index]:
                    phases[index] = .armed
                    generations[index] = clock
                    reArmed += 1
                default:
                    break
                }
            }
            symbolSides[which].phases = phases
            symbolSides[which].generations = generations
        }
        sides[symbol] = symbolSides
        return (fired, reArmed)
    }
}
