/// docs/ALERTS.md's crossing rules written the plainest way, for one symbol: every side checked on every tick,
/// prices in tenths and thresholds in whole units as integers, the band as an exact integer comparison.
///
/// | side      | armed while    | an armed side fires at | a fired side re-arms at        |
/// |-----------|----------------|------------------------|--------------------------------|
/// | `above A` | last price < A | p ≥ A                  | p < A and p ≤ A × (1 − h)      |
/// | `below B` | last price > B | p ≤ B                  | p > B and p ≥ B × (1 + h)      |
///
/// The first price arms a side only when strictly on its near side; a side saved after a price is placed by the
/// same rule. With `h` in per mille, `p ≤ A × (1 − h)` for `p` in tenths is `1000 p ≤ 10 A (1000 − h)`.
struct AlertReferenceModel {
    enum State { case awaitingPrice, armed, disarmed }

    enum Direction: String, Hashable, Comparable {
        case above, below
        static func < (lhs: Direction, rhs: Direction) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    struct Side {
        let device: String
        let direction: Direction
        let threshold: Int64
        var state: State
    }

    /// One alert as the reference expects it: device, side, whole threshold, price in tenths.
    struct Expected: Hashable, Comparable, CustomStringConvertible {
        let device: String
        let direction: Direction
        let threshold: Int64
        let priceTenths: Int64

        static func < (lhs: Expected, rhs: Expected) -> Bool {
            (lhs.device, lhs.direction, lhs.threshold, lhs.priceTenths)
                < (rhs.device, rhs.direction, rhs.threshold, rhs.priceTenths)
        }

        var description: String { "\(device) \(direction) \(threshold) @ \(priceTenths)/10" }
    }

    let bandPerMille: Int64
    private(set) var sides: [Side] = []
    private(set) var lastTenths: Int64?

    init(bandPerMille: Int64) {
        self.bandPerMille = bandPerMille
    }

    mutating func addSide(device: String, direction: Direction, threshold: Int64) {
        let state: State = lastTenths.map { nearSide($0, threshold, direction) ? .armed : .disarmed } ?? .awaitingPrice
        sides.append(Side(device: device, direction: direction, threshold: threshold, state: state))
    }

    /// One tick; returns what fires.
    mutating func tick(tenths price: Int64) -> [Expected] {
        defer { lastTenths = price }
        var fired: [Expected] = []
        for index in sides.indices {
            let side = sides[index]
            switch side.state {
            case .awaitingPrice:
                sides[index].state = nearSide(price, side.threshold, side.direction) ? .armed : .disarmed
            case .armed where reaches(price, side.threshold, side.direction):
                fired.append(Expected(
                    device: side.device, direction: side.direction, threshold: side.threshold, priceTenths: price))
                sides[index].state = .disarmed
            case .disarmed where reArms(price, side.threshold, side.direction):
                sides[index].state = .armed
            default:
                break
            }
        }
        return fired
    }

    private func nearSide(_ price: Int64, _ threshold: Int64, _ direction: Direction) -> Bool {
        direction == .above ? price < threshold * 10 : price > threshold * 10
    }

    private func reaches(_ price: Int64, _ threshold: Int64, _ direction: Direction) -> Bool {
        direction == .above ? price >= threshold * 10 : price <= threshold * 10
    }

    private func reArms(_ price: Int64, _ threshold: Int64, _ direction: Direction) -> Bool {
        switch direction {
        case .above: price < threshold * 10 && 1000 * price <= threshold * 10 * (1000 - bandPerMille)
        case .below: price > threshold * 10 && 1000 * price >= threshold * 10 * (1000 + bandPerMille)
        }
    }
}
