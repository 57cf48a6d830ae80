/// Comparison of secrets without a timing side channel.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes, taking time that depends only on their lengths, never on where
    /// they first differ — so a caller guessing a token byte by byte learns nothing from how long a refusal
    /// took. The lengths themselves are not hidden: compare fixed-length values (digests of the secrets) when
    /// the length is secret too.
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return withContiguousBytes(a) { a in
            withContiguousBytes(b) { b in OpenSSLCrypto.constantTimeEqual(a, b) }
        }
    }
}
