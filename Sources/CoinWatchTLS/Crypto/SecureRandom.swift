/// Bytes from OpenSSL's cryptographically secure generator (seeded from the kernel), for keys, tokens, nonces
/// and WebSocket masks.
public enum SecureRandom {
    /// `count` random bytes.
    ///
    /// - Throws: `TLSError` with code `.randomUnavailable` when the generator cannot be used; a caller must
    ///   then not fall back to a weaker source.
    public static func bytes(_ count: Int) throws(TLSError) -> [UInt8] {
        precondition(count >= 0, "a negative byte count")
        var bytes = [UInt8](repeating: 0, count: count)
        try fill(&bytes)
        return bytes
    }

    /// Overwrites every byte of `buffer` with random bytes.
    public static func fill(_ buffer: inout [UInt8]) throws(TLSError) {
        // `withUnsafeMutableBytes` rethrows untyped errors; carrying the outcome out keeps the type.
        let outcome = buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(TLSError) in try OpenSSLCrypto.randomBytes(into: bytes) }
        }
        try outcome.get()
    }
}
