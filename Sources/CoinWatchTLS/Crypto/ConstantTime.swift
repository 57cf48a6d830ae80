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

    /// `equal` for two strings' UTF-8, read where it lies: for the hot paths that compare a call's token, where the
    /// generic form's copies and indirect calls cost about a tenth of a cached check.
    public static func equal(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a
        var b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in OpenSSLCrypto.constantTimeEqual(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) }
        }
    }
}
