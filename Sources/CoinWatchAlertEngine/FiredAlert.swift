public import CoinWatchModel

/// A threshold crossing for one device, ready to be put in an outbox and pushed.
public struct FiredAlert: Hashable, Sendable {
    public let device: DeviceID
    public let symbol: Symbol
    public let direction: AlertDirection
    /// The rule's threshold as the device saved it.
    public let threshold: ExactDecimal
    /// The tick's price that crossed it.
    public let price: ExactDecimal
    /// The arming this crossing consumed (see ``ArmState/armed(generation:)``).
    public let generation: UInt64

    public init(
        device: DeviceID,
        symbol: Symbol,
        direction: AlertDirection,
        threshold: ExactDecimal,
        price: ExactDecimal,
        generation: UInt64
    ) {
        self.device = device
        self.symbol = symbol
        self.direction = direction
        self.threshold = threshold
        self.price = price
        self.generation = generation
    }

    /// `device|symbol|direction|threshold|generation`.
    ///
    /// Stable across re-deliveries of this crossing (outbox retries, a restart before the send was
    /// recorded) and different for any later crossing of the same rule, because every arming takes a
    /// new generation. The price is deliberately not part of it: a re-evaluation after a restart may
    /// see a different tick for the same crossing. `|` cannot occur in a device id or a symbol, so
    /// the key is unambiguous.
    public var idempotencyKey: String {
        "\(device.rawValue)|\(symbol.rawValue)|\(direction.rawValue)|\(threshold)|\(generation)"
    }
}
