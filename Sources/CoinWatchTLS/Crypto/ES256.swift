/// A P-256 private key for ES256 (ECDSA with SHA-256, RFC 7518 §3.4): the key type of Apple's `AuthKey_*.p8`
/// files, which sign APNs provider tokens.
///
/// Sendable because OpenSSL allows one `EVP_PKEY` to be used by several threads at once as long as none
/// changes it (openssl-threads(7)), and nothing here changes a key after it is loaded.
public final class ES256PrivateKey: @unchecked Sendable {
    /// The `EVP_PKEY`, owned.
    let key: OpaquePointer

    private init(key: OpaquePointer) {
        self.key = key
    }

    deinit {
        OpenSSLCrypto.freeKey(key)
    }

    /// Reads a PEM private key: PKCS#8 (`-----BEGIN PRIVATE KEY-----`, a `.p8` file's content) or SEC1
    /// (`-----BEGIN EC PRIVATE KEY-----`), unencrypted, on P-256.
    ///
    /// - Throws: `TLSError` `.invalidKey` for anything else (another curve or key type, an encrypted key, text
    ///   that is not PEM).
    public convenience init(pem: some Collection<UInt8>) throws(TLSError) {
        let key = try withContiguousBytes(pem) { (bytes) throws(TLSError) in
            try OpenSSLCrypto.privateKey(pem: bytes, source: "the PEM text")
        }
        self.init(key: key)
    }

    /// Reads the PEM private key in file `path` (a `.p8` file), as `init(pem:)` does.
    ///
    /// - Throws: `TLSError` `.fileUnreadable` when the file cannot be opened, `.invalidKey` as `init(pem:)`.
    public convenience init(contentsOfFile path: String) throws(TLSError) {
        self.init(key: try OpenSSLCrypto.privateKey(file: path))
    }

    /// A new random key (for tests, and for tools that make a key for a mock provider).
    public static func generate() throws(TLSError) -> ES256PrivateKey {
        ES256PrivateKey(key: try OpenSSLCrypto.generateP256())
    }

    /// The key's public half.
    public func publicKey() throws(TLSError) -> ES256PublicKey {
        try ES256PublicKey(pem: Array(publicKeyPEM().utf8))
    }

    /// The public half as PEM SubjectPublicKeyInfo (`-----BEGIN PUBLIC KEY-----`), what a verifier is given.
    public func publicKeyPEM() throws(TLSError) -> String {
        try OpenSSLCrypto.publicKeyPEM(key)
    }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, the `.p8` format). This is the secret
    /// itself: write it only to a file only its owner can read, never to a log.
    public func pkcs8PEM() throws(TLSError) -> String {
        try OpenSSLCrypto.privateKeyPEM(key)
    }

    /// The ES256 signature of `message` in JWS form: 64 bytes, `r‖s` (RFC 7518 §3.4), not DER.
    public func signature(for message: some Collection<UInt8>) throws(TLSError) -> [UInt8] {
        try ECDSASignature.raw(fromDER: derSignature(for: message))
    }

    /// The ECDSA-with-SHA-256 signature of `message` in DER (`ECDSA-Sig-Value`, what `openssl dgst -sign`
    /// writes and X.509 uses).
    public func derSignature(for message: some Collection<UInt8>) throws(TLSError) -> [UInt8] {
        try withContiguousBytes(message) { (bytes) throws(TLSError) in try OpenSSLCrypto.signSHA256(key, bytes) }
    }
}

/// A P-256 public key that checks ES256 signatures.
///
/// Sendable for the reason `ES256PrivateKey` is.
public final class ES256PublicKey: @unchecked Sendable {
    /// The `EVP_PKEY`, owned.
    let key: OpaquePointer

    deinit {
        OpenSSLCrypto.freeKey(key)
    }

    /// Reads a PEM SubjectPublicKeyInfo (`-----BEGIN PUBLIC KEY-----`) on P-256.
    ///
    /// - Throws: `TLSError` `.invalidKey` for anything else.
    public init(pem: some Collection<UInt8>) throws(TLSError) {
        key = try withContiguousBytes(pem) { (bytes) throws(TLSError) in
            try OpenSSLCrypto.publicKey(pem: bytes, source: "the PEM text")
        }
    }

    /// The key as PEM SubjectPublicKeyInfo (`-----BEGIN PUBLIC KEY-----`).
    public func publicKeyPEM() throws(TLSError) -> String {
        try OpenSSLCrypto.publicKeyPEM(key)
    }

    /// Whether `signature`, in JWS form (64 bytes, `r‖s`), is this key's ES256 signature of `message`. A
    /// signature of any other length is simply not valid.
    public func isValidSignature(_ signature: some Collection<UInt8>, for message: some Collection<UInt8>) -> Bool {
        guard let der = try? ECDSASignature.der(fromRaw: Array(signature)) else { return false }
        return isValidDERSignature(der, for: message)
    }

    /// Whether DER `signature` is this key's ECDSA-with-SHA-256 signature of `message`.
    public func isValidDERSignature(_ signature: some Collection<UInt8>, for message: some Collection<UInt8>) -> Bool {
        let signature = Array(signature)
        return withContiguousBytes(message) { OpenSSLCrypto.verifySHA256(key, $0, signature: signature) }
    }
}

/// Conversions between the two encodings of an ECDSA P-256 signature: DER `ECDSA-Sig-Value` (X.509, `openssl
/// dgst`) and the fixed 64-byte `r‖s` JWS uses (RFC 7518 §3.4).
public enum ECDSASignature {
    /// The 64-byte `r‖s` form of a DER signature.
    ///
    /// - Throws: `TLSError` `.invalidSignature` unless `der` is exactly one DER `ECDSA-Sig-Value` whose
    ///   integers fit in 32 bytes.
    public static func raw(fromDER der: [UInt8]) throws(TLSError) -> [UInt8] {
        try OpenSSLCrypto.rawSignature(fromDER: der)
    }

    /// The DER form of a 64-byte `r‖s` signature.
    ///
    /// - Throws: `TLSError` `.invalidSignature` unless `raw` is 64 bytes.
    public static func der(fromRaw raw: [UInt8]) throws(TLSError) -> [UInt8] {
        try OpenSSLCrypto.derSignature(fromRaw: raw)
    }
}
