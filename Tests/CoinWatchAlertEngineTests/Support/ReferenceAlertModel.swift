@testable import CoinWatchAlertEngine
import CoinWatchModel

/// The crossing rules written the obvious way: one state per rule side, every side checked on every
/// tick, thresholds compared as decimals. The engine must agree with it on every alert and state.
struct ReferenceAlertModel {
    struct Key: Hashable {
        let device: DeviceID
        let symbol: Symbol
        let direction: AlertDirection
    }

    struct Side {
        var threshold: ExactDecimal
        var state: ArmState
    }

    let hysteresis: ExactDecimal
    private(set) var sides: [Key: Side] = [:]
    private(set) var lastPrices: [Symbol: ExactDecimal] = [:]
    private(set) var clock: UInt64 = 0

    init(hysteresis: ExactDecimal) {
        self.hysteresis = hysteresis
    }

    var armStates: Set<ArmStateRecord> {
        Set(sides.map { key, side in
            ArmStateRecord(
                device: key.device, symbol: key.symbol, direction: key.direction, threshold: side.threshold,
                state: side.state
            )
        })
    }

    mutating func setRule(device: DeviceID, symbol: Symbol, rule: AlertRule) -> Set<ArmStateRecord> {
        clock += 1
        var changes = Set<ArmStateRecord>()
        for direction in AlertDirection.allCases {
            let key = Key(device: device, symbol: symbol, direction: direction)
            guard let threshold = rule.threshold(direction) else {
                sides[key] = nil
                continue
            }
            if sides[key]?.threshold == threshold { continue }
            let state = fresh(threshold: threshold, direction: direction, price: lastPrices[symbol])
            sides[key] = Side(threshold: threshold, state: state)
            changes.insert(
                ArmStateRecord(device: device, symbol: symbol, direction: direction, threshold: threshold, state: state)
            )
        }
        return changes
    }

    mutating func removeRule(device: DeviceID, symbol: Symbol) {
        for direction in AlertDirection.allCases {
            sides[Key(device: device, symbol: symbol, direction: direction)] = nil
        }
    }

    mutating func removeDevice(_ device: DeviceID) {
        sides = sides.filter { $0.key.device != device }
    }

    mutating func evaluate(
        symbol: Symbol, price: ExactDecimal
    ) -> (alerts: Set<FiredAlert>, changes: Set<ArmStateRecord>) {
        clock += 1
        let first = lastPrices[symbol] == nil
        lastPrices[symbol] = price
        var alerts = Set<FiredAlert>()
        var changes = Set<ArmStateRecord>()
        for (key, side) in sides where key.symbol == symbol {
            var next = side.state
            if first {
                next = fresh(threshold: side.threshold, direction: key.direction, price: price)
            } else {
                switch side.state {
                case .armed(let generation) where reaches(price, side.threshold, key.direction):
                    alerts.insert(
                        FiredAlert(
                            device: key.device, symbol: symbol, direction: key.direction, threshold: side.threshold,
                            price: price, generation: generation
                        )
                    )
                    next = .disarmed
                case .disarmed where reArms(price, side.threshold, key.direction):
                    next = .armed(generation: clock)
                default:
                    break
                }
            }
            if next != side.state || first {
                sides[key]?.state = next
                changes.insert(
                    ArmStateRecord(
                        device: key.device, symbol: symbol, direction: key.direction, threshold: side.threshold,
                        state: next
                    )
                )
            }
        }
        return (alerts, changes)
    }

    private func fresh(threshold: ExactDecimal, direction: AlertDirection, price: ExactDecimal?) -> ArmState {
        guard let price else { return .awaitingPrice }
        let nearSide = direction == .above ? price < threshold : price > threshold
        return nearSide ? .armed(generation: clock) : .disarmed
    }

    private func reaches(_ price: ExactDecimal, _ threshold: ExactDecimal, _ direction: AlertDirection) -> Bool {
        direction == .above ? price >= threshold : price <= threshold
    }

    /// Strictly back on the near side and beyond `threshold × (1 ∓ h)`, computed with decimal
    /// arithmetic (exact for the values the tests use).
    private func reArms(_ price: ExactDecimal, _ threshold: ExactDecimal, _ direction: AlertDirection) -> Bool {
        do {
            switch direction {
            case .above:
                let boundary = try threshold.multiplied(by: ExactDecimal(1).subtracting(hysteresis), rounding: .down)
                return price < threshold && price <= boundary
            case .below:
                let boundary = try threshold.multiplied(by: ExactDecimal(1).adding(hysteresis), rounding: .up)
                return price > threshold && price >= boundary
            }
        } catch {
            preconditionFailure("test values must not overflow: \(error)")
        }
    }
}
