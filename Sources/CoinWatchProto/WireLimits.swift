/// Bounds on untrusted input.
public enum WireLimits {
    /// The default largest encoding a decoder accepts: 4 MiB, gRPC's default receive limit.
    ///
    /// Decoding allocates more than the input size: protobuf-c builds a C tree and the Swift values are copied
    /// out of it, and an adversarial encoding of many empty repeated messages costs about 2 bytes each on the
    /// wire but on the order of a hundred bytes each in memory. Callers that know a tighter bound (the
    /// frame limit a server announces, for instance) should pass it as `maxBytes`.
    public static let defaultMaxMessageBytes = 4 * 1024 * 1024
}
