import CoinWatchCore
import CoinWatchLogging

/// JSON Web Tokens signed with ES256 (RFC 7519 over JWS compact serialisation, RFC 7515 §7.1), in the small
/// shape a provider token needs: header `{"alg":"ES256","kid":…}`, claims such as `{"iss":…,"iat":…}`.
///
/// The JSON is written here, in the order given, with no whitespace, so the same inputs always give the same
/// token text (a caller caching a token can compare texts).
public enum JSONWebToken {
    /// A header field's or claim's value.
    public enum Value: Hashable, Sendable {
        case string(String)
        case integer(Int64)
    }

    /// A signed token's parts after its signature was checked.
    public struct Verified: Hashable, Sendable {
        /// The header's JSON text.
        public var header: [UInt8]
        /// The claims' JSON text.
        public var claims: [UInt8]
    }

    /// A token `header.claims.signature` with header `{"alg":"ES256"[,"kid":keyID]}` and `claims` as given,
    /// signed with `key`.
    public static func es256(
        keyID: String?, claims: [(name: String, value: Value)], key: ES256PrivateKey
    ) throws(TLSError) -> String {
        var header: [(name: String, value: Value)] = [("alg", .string("ES256"))]
        if let keyID { header.append(("kid", .string(keyID))) }
        let signingInput = Base64.encodeURL(json(header).utf8) + "." + Base64.encodeURL(json(claims).utf8)
        let signature = try key.signature(for: signingInput.utf8)
        return signingInput + "." + Base64.encodeURL(signature)
    }

    /// A token with header `{"alg":"ES256","kid":keyID}` and claims `{"iss":issuer,"iat":issuedAt}` (issuedAt in
    /// seconds since 1970): the provider-token shape of token-based APNs authentication.
    public static func es256(keyID: String, issuer: String, issuedAt: Int64, key: ES256PrivateKey) throws(TLSError)
        -> String
    {
        try es256(keyID: keyID, claims: [("iss", .string(issuer)), ("iat", .integer(issuedAt))], key: key)
    }

    /// The header and claims of `token` if it is three base64url parts whose signature is `key`'s ES256
    /// signature of the first two; nil otherwise.
    ///
    /// Only the signature is checked: the caller reads the header (its `alg` must be `ES256`; a token claiming
    /// another algorithm cannot carry a valid P-256 signature here anyway) and the claims.
    public static func verifiedES256(_ token: String, key: ES256PublicKey) -> Verified? {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64.decodeURL(Substring(parts[0])),
            let claims = Base64.decodeURL(Substring(parts[1])), let signature = Base64.decodeURL(Substring(parts[2]))
        else { return nil }
        let signingInput = token.utf8.prefix(parts[0].count + 1 + parts[1].count)
        guard key.isValidSignature(signature, for: signingInput) else { return nil }
        return Verified(header: header, claims: claims)
    }

    /// `fields` as a JSON object, in order, without whitespace.
    static func json(_ fields: [(name: String, value: Value)]) -> String {
        var text = "{"
        for (index, field) in fields.enumerated() {
            if index > 0 { text += "," }
            text += JSONText.quote(field.name) + ":"
            switch field.value {
            case .string(let string): text += JSONText.quote(string)
            case .integer(let integer): text += String(integer)
            }
        }
        return text + "}"
    }
}
