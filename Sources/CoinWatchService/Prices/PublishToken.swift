import CoinWatchRPC

/// The shared secret an external feeder must present to `PublishPrices`.
///
/// Checked against the tokens the caller presented (`ServerContext.bearerTokens`: the call's `authorization`
/// metadata, as `Bearer <token>` or the bare token, then the `Hello` auth token), in time independent of where
/// the first difference lies, so the comparison leaks nothing about the token.
struct PublishToken: Sendable {
    let bytes: [UInt8]

    /// nil for an empty token: an empty token would accept every caller, which is what no token means.
    init?(_ text: String?) {
        guard let text, !text.isEmpty else { return nil }
        bytes = Array(text.utf8)
    }

    func accepts(_ context: ServerContext) -> Bool {
        context.bearerTokens.contains { matches($0) }
    }

    func matches(_ candidate: String) -> Bool {
        let other = Array(candidate.utf8)
        var difference = UInt8(truncatingIfNeeded: other.count ^ bytes.count)
        for index in bytes.indices {
            difference |= bytes[index] ^ (index < other.count ? other[index] : 0)
        }
        return difference == 0 && other.count == bytes.count
    }
}
