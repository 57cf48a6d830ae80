/// SHA-1 (FIPS 180-4), for the one protocol that still asks for it: the WebSocket handshake's
/// `Sec-WebSocket-Accept` (RFC 6455 §4.2.2). Not for anything that needs collision resistance.
public enum SHA1 {
    /// The digest's length in bytes.
    public static let byteCount = 20

    /// The SHA-1 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(bytes) { OpenSSLCrypto.digest(.sha1, $0) }
    }
}

/// SHA-256 (FIPS 180-4).
public enum SHA256 {
    /// The digest's length in bytes.
    public static let byteCount = 32

    /// The SHA-256 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(bytes) { OpenSSLCrypto.digest(.sha256, $0) }
    }
}

/// HMAC (RFC 2104) with SHA-256.
public enum HMACSHA256 {
    /// The code's length in bytes.
    public static let byteCount = 32

    /// The HMAC-SHA256 of `message` under `key` (any length; RFC 2104 hashes a key longer than the block).
    public static func authenticationCode(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(key) { key in
            withContiguousBytes(message) { message in OpenSSLCrypto.hmacSHA256(key: key, message: message) }
        }
    }

    /// Whether `code` is the HMAC-SHA256 of `message` under `key`, compared in constant time.
    public static func isValid(
        _ code: some Collection<UInt8>, key: some Collection<UInt8>, message: some Collection<UInt8>
    ) -> Bool {
        ConstantTime.equal(authenticationCode(key: key, message: message), code)
    }
}

/// Runs `body` over `bytes` in contiguous memory (an `Array` argument is not copied: `Array(array)` shares its
/// storage).
func withContiguousBytes<R, E: Error>(
    _ bytes: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws(E) -> R
) throws(E) -> R {
    // `withUnsafeBytes` rethrows untyped errors; carrying the outcome out keeps `E`. Contiguous bytes (an array,
    // a native string's UTF-8) are used where they lie; others are copied once.
    var outcome: Result<R, E>?
    let inPlace: Void? = bytes.withContiguousStorageIfAvailable { buffer in
        outcome = Result { () throws(E) in try body(UnsafeRawBufferPointer(buffer)) }
    }
    if inPlace == nil {
        Array(bytes).withUnsafeBytes { raw in outcome = Result { () throws(E) in try body(raw) } }
    }
    return try outcome!.get()
}
