/// Constants of the CoinWatch protocol that both ends share.
public enum RPCProtocol {
    /// The protocol version this code speaks, sent in `Hello` and `Welcome`.
    public static let version: UInt32 = 1
    /// The most payload bytes a `Ping` may carry; a longer one is a connection error.
    public static let maxPingPayload = 64
}
