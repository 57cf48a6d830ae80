/// Constants of the CoinWatch protocol that both ends share.
public enum RPCProtocol {
    /// The protocol version this code speaks, sent in `Hello` and `Welcome`.
    public static let version: UInt32 = 1
    /// The most payload bytes a `Ping` may carry; a longer one is a connection error.
    public static let maxPingPayload = 64
    /// The protocol's TLS ALPN name (RFC 7301), which native clients offer and TLS listeners accept.
    public static let applicationProtocol = "coinwatch"
}
