/// What one tick did: the alerts to send and the arm states to persist.
///
/// Reusable: pass the same value to ``AlertEngine/evaluate(symbol:price:into:)`` on every tick so
/// its arrays keep their capacity instead of allocating per tick.
public struct EvaluationResult: Sendable {
    /// Crossings, in no particular order.
    public var alerts: [FiredAlert] = []
    /// Armed sides the tick reached but did not fire, because it was evaluated as a resumption after a gap in the
    /// prices (see ``AlertEngine/evaluate(symbol:price:resuming:into:)``); they are disarmed like fired sides.
    public var suppressed = 0
    /// The new state of every side that fired (now ``ArmState/disarmed``), re-armed, or was set by the
    /// symbol's first price. Persist these with the tick's price and ``clock``.
    public var armStateChanges: [ArmStateRecord] = []
    /// The engine clock after the tick; persist it whenever `armStateChanges` is persisted.
    public var clock: UInt64 = 0

    public init() {}

    /// Empties the arrays, keeping their storage.
    public mutating func removeAll() {
        if !alerts.isEmpty { alerts.removeAll(keepingCapacity: true) }
        if !armStateChanges.isEmpty { armStateChanges.removeAll(keepingCapacity: true) }
        suppressed = 0
    }
}
