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

    /// `equal` for two strings' UTF-8, read where it lies: for the hot path that compares a call's token. With the
    /// generic form (an unspecialised call from another module) GetSettings with `--auth required` ran at 152–160k
    /// calls/s against 154–186k with this one (three alternating pairs, 2026-12-07; docs/PERFORMANCE.md).
    public static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a
        var b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in OpenSSLCrypto.constantTimeEqual(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) }
        }
    }
}
