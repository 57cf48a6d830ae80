public import CoinWatchModel

/// One device's thresholds for one symbol.
///
/// The original app's `*_min_notify` / `*_max_notify` settings: "set to zero to turn off
/// notification", so a zero threshold and an absent one both mean that side is off. `below < above`
/// is validated where settings are saved; the engine treats the two sides independently, so any
/// combination is well defined here.
public struct AlertRule: Hashable, Sendable {
    /// Fire when the price falls to or through this level.
    public var below: ExactDecimal?
    /// Fire when the price rises to or through this level.
    public var above: ExactDecimal?

    public init(below: ExactDecimal? = nil, above: ExactDecimal? = nil) {
        self.below = below
        self.above = above
    }

    /// The side's threshold, with zero read as off.
    public func threshold(_ direction: AlertDirection) -> ExactDecimal? {
        let value = direction == .above ? above : below
        guard let value, !value.isZero else { return nil }
        return value
    }

    /// Both sides off: the rule can be dropped.
    public var isOff: Bool { threshold(.above) == nil && threshold(.below) == nil }
}

/// Which way the price must cross a threshold.
public enum AlertDirection: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Crossing up: `*_max_notify`.
    case above
    /// Crossing down: `*_min_notify`.
    case below

    public var description: String { rawValue }
}
