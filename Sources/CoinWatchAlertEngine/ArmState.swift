public import CoinWatchModel

/// Whether a rule side can fire on its next crossing.
///
/// This is the state that must survive a restart, together with each symbol's last price and the
/// engine's ``AlertEngine/clock``: without it a restarted engine would either fire again for a
/// crossing it already reported or forget that a side had re-armed.
public enum ArmState: Hashable, Sendable {
    /// No price has been seen for the symbol yet; the side's state is decided by the first price,
    /// which never fires anything.
    case awaitingPrice
    /// The last price was strictly on the near side of the threshold (below it for `above`, above it
    /// for `below`); the next price at or past the threshold fires.
    ///
    /// `generation` is the engine clock at the moment the side armed. It is part of the fired
    /// alert's idempotency key, so each arming — and so each crossing — has its own key.
    case armed(generation: UInt64)
    /// The side fired, or was saved while the price was at or past its threshold. It re-arms once the
    /// price is back beyond the hysteresis boundary.
    case disarmed
}

/// A rule side's arm state, as persisted and as reported when it changes.
///
/// `threshold` ties the state to one threshold: a state recorded for a different threshold than the
/// current rule's is stale (the rule was changed) and is ignored at load.
public struct ArmStateRecord: Hashable, Sendable {
    public let device: DeviceID
    public let symbol: Symbol
    public let direction: AlertDirection
    public let threshold: ExactDecimal
    public let state: ArmState

    public init(device: DeviceID, symbol: Symbol, direction: AlertDirection, threshold: ExactDecimal, state: ArmState) {
        self.device = device
        self.symbol = symbol
        self.direction = direction
        self.threshold = threshold
        self.state = state
    }
}
