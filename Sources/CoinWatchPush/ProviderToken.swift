import CoinWatchCore

/// Signs provider tokens. The real signer holds the team's `.p8` key; tests use fakes to drive the token's
/// life cycle without keys.
public protocol ProviderTokenSigner: Sendable {
    /// The JWT APNs expects: header `{"alg":"ES256","kid":keyID}`, claims `{"iss":teamID,"iat":issuedAt}`,
    /// signed with ES256.
    func providerToken(keyID: String, teamID: String, issuedAt: Int64) throws -> String
}

/// The provider token's life: one JWT shared by every connection and reused for every request, replaced once it
/// is `refresh` old, counted from when it was made, which is its first use.
///
/// The bugs other providers are known for are each ruled out here: no token per request (APNs answers
/// `429 TooManyProviderTokenUpdates`), no refresh timer started when the client is created rather than at first
/// use, no token per connection or per worker, and `iat` is the clock's current second, never ahead of it (a token
/// from the future is refused). The age is measured on the monotonic clock, so a wall-clock step cannot make a
/// fresh token look old or an old one fresh.
///
/// Confined to the provider's thread.
final class ProviderToken {
    struct Token {
        /// The whole `authorization: bearer <JWT>` header line, built once per token. A secret: never logged.
        let header: String
        /// Increases by one per token made, so an answer can be matched to the token its request carried.
        let generation: Int
        let issuedAt: Int64
        /// When it was made, in `MonotonicClock` nanoseconds.
        let made: Int64
        /// Made because APNs refused the one before it: if APNs refuses this one too, the key, key id or team id
        /// is wrong and more tokens will not help.
        let replacesRejected: Bool
    }

    /// What to do after APNs refused a token (403).
    enum Verdict: Equatable {
        /// Send again with the current token (a fresh one, made now or earlier).
        case retry
        /// A token made right after a refusal was refused too: stop.
        case pause
    }

    let keyID: String
    let teamID: String
    let refresh: Duration
    private let signer: any ProviderTokenSigner
    private let wallClock: () -> Int64
    private(set) var current: Token?
    /// Tokens made so far.
    private(set) var issued = 0
    /// The next token replaces a refused one (set by `rejected` and after a pause).
    private var nextReplacesRejected = false

    init(keyID: String, teamID: String, refresh: Duration, signer: any ProviderTokenSigner,
         wallClock: @escaping () -> Int64) {
        self.keyID = keyID
        self.teamID = teamID
        self.refresh = refresh
        self.signer = signer
        self.wallClock = wallClock
    }

    /// The token for a request sent now: the current one, or a new one when there is none yet or it is
    /// `refresh` old.
    func token(now: Int64) throws -> Token {
        if let current, now - current.made < refresh.inNanoseconds { return current }
        return try make(now: now)
    }

    /// APNs refused a request that carried the token of `generation`.
    func rejected(generation: Int) -> Verdict {
        guard let current, generation == current.generation else {
            // An older token (or one already dropped): requests with the current one may well pass.
            return .retry
        }
        if current.replacesRejected { return .pause }
        // Dropped now; the next request makes the replacement, marked so that its refusal pauses.
        self.current = nil
        nextReplacesRejected = true
        return .retry
    }

    /// After a pause: the next request makes a fresh token, and a refusal of it pauses again.
    func retryAfterPause() {
        current = nil
        nextReplacesRejected = true
    }

    private func make(now: Int64) throws -> Token {
        let issuedAt = wallClock()
        let jwt = try signer.providerToken(keyID: keyID, teamID: teamID, issuedAt: issuedAt)
        issued += 1
        let token = Token(
            header: "authorization: bearer \(jwt)", generation: issued, issuedAt: issuedAt, made: now,
            replacesRejected: nextReplacesRejected)
        nextReplacesRejected = false
        current = token
        return token
    }
}
