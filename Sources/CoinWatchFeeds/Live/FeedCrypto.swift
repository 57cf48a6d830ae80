import CoinWatchTLS

/// The cryptography the WebSocket handshake needs, from CoinWatchTLS (OpenSSL): SHA-1 for `Sec-WebSocket-Accept`
/// and secure random bytes for `Sec-WebSocket-Key`. Frame masking keys come from the system's secure generator
/// (`getrandom(2)`) in `WebSocketClient`, which needs no allocation per frame.
enum FeedCrypto {
    @Sendable static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        SHA1.hash(bytes)
    }

    /// 16 random bytes for a handshake key; the system generator if OpenSSL's fails (it does not on Linux).
    static func webSocketKey() -> [UInt8] {
        (try? SecureRandom.bytes(16)) ?? WebSocketClient.secureKeyBytes()
    }
}
