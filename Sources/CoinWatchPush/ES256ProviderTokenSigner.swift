import CoinWatchTLS

/// Signs provider tokens with the team's `.p8` key, through CoinWatchTLS (OpenSSL).
///
/// The key is read once, when the server starts, so a wrong path or a key of the wrong kind stops the start with
/// one line instead of failing the first notification. Neither the key nor a token ever appears in a message.
public struct ES256ProviderTokenSigner: ProviderTokenSigner {
    private let key: ES256PrivateKey

    /// Reads the PKCS#8 P-256 key in `keyFile` (Apple's `AuthKey_<key id>.p8`).
    public init(keyFile: String) throws(PushError) {
        do {
            key = try ES256PrivateKey(contentsOfFile: keyFile)
        } catch {
            throw PushError(code: .keyUnusable, message: "cannot use the APNs key file \(keyFile): \(error.message)")
        }
    }

    public func providerToken(keyID: String, teamID: String, issuedAt: Int64) throws -> String {
        try JSONWebToken.es256(keyID: keyID, issuer: teamID, issuedAt: issuedAt, key: key)
    }
}
