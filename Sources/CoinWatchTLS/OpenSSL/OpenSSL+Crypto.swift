import COpenSSL

/// Every libcrypto call of the crypto facet, so the rest of the module deals in Swift values and opaque key
/// handles. Each function leaves OpenSSL's thread-local error queue empty: failures move it into the thrown
/// `TLSError`, and calls whose failure is an answer (a signature that does not verify) clear it.
enum OpenSSLCrypto {
    // MARK: Errors

    /// Drains this thread's OpenSSL error queue, oldest first.
    ///
    /// `ERR_get_error_all` removes the earliest entry and returns its packed code (0 when the queue is empty),
    /// with `data` pointing at the entry's extra text when `flags & ERR_TXT_STRING`; `ERR_error_string_n`
    /// writes `error:<code>:<library>:<function>:<reason>` into the caller's buffer, NUL-terminated.
    static func drainErrors() -> [String] {
        var errors = [String]()
        while true {
            var data: UnsafePointer<CChar>?
            var flags: Int32 = 0
            let code = ERR_get_error_all(nil, nil, nil, &data, &flags)
            guard code != 0 else { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            var text = string(fromC: buffer)
            if flags & ERR_TXT_STRING != 0, let data, data.pointee != 0 {
                text += " (\(String(cString: data)))"
            }
            errors.append(text)
        }
        return errors
    }

    /// A `TLSError` carrying (and clearing) the error queue.
    static func error(_ code: TLSError.Code, _ message: String) -> TLSError {
        TLSError(code: code, message: message, openSSLErrors: drainErrors())
    }

    /// `ERR_clear_error`: empties this thread's error queue, so a failure reported next is not mixed with an
    /// older one.
    static func clearErrors() {
        ERR_clear_error()
    }

    // MARK: Digests, HMAC, random, comparison

    /// `EVP_Digest(data, count, md, &size, type, NULL)`: one-shot digest into `md` (at least `EVP_MAX_MD_SIZE`
    /// bytes); 1 on success. It fails only without memory or a provider for the algorithm, which a process
    /// cannot go on without, so that traps.
    static func digest(_ algorithm: DigestAlgorithm, _ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var size: UInt32 = 0
        let type = algorithm == .sha1 ? EVP_sha1() : EVP_sha256()
        let ok = EVP_Digest(bytes.baseAddress, bytes.count, &output, &size, type, nil)
        precondition(ok == 1, "EVP_Digest failed: \(drainErrors())")
        return Array(output[..<Int(size)])
    }

    /// `HMAC(EVP_sha256(), key, key_len, data, data_len, md, &md_len)`: returns `md`, NULL on failure (only
    /// without memory or a provider, as above). A NULL key pointer with length 0 is an empty key.
    static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var size: UInt32 = 0
        // An empty key still needs a valid pointer.
        let result = nonNull(key) { key in
            HMAC(
                EVP_sha256(), key.baseAddress, Int32(key.count), message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                message.count, &output, &size)
        }
        precondition(result != nil, "HMAC failed: \(drainErrors())")
        return Array(output[..<Int(size)])
    }

    /// `RAND_bytes(buf, num)`: fills `buf` from OpenSSL's CSPRNG (seeded from the kernel); 1 on success, 0 or -1
    /// when the generator could not be seeded or lacks a provider.
    static func randomBytes(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        guard RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 else {
            throw error(.randomUnavailable, "the random generator failed")
        }
    }

    /// `CRYPTO_memcmp(a, b, len)`: 0 when equal, taking time that depends only on `len`, never on where the
    /// inputs differ.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        precondition(a.count == b.count)
        guard a.count > 0 else { return true }
        return CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0
    }

    // MARK: P-256 keys

    /// `EVP_PKEY_free`: drops one reference to a key.
    static func freeKey(_ key: OpaquePointer) {
        EVP_PKEY_free(key)
    }

    /// Reads one PEM private key (PKCS#8 `BEGIN PRIVATE KEY`, Apple's `.p8` format, or SEC1 `BEGIN EC PRIVATE
    /// KEY`) from memory and checks it is a P-256 key.
    ///
    /// `PEM_read_bio_PrivateKey(bp, NULL, cb, u)` returns a new key or NULL; `cb` is asked for a passphrase only
    /// for an encrypted key. Without a callback OpenSSL would prompt on the terminal, so the callback returns -1:
    /// an encrypted key is refused instead of blocking the process.
    static func privateKey(pem: UnsafeRawBufferPointer, source: String) throws(TLSError) -> OpaquePointer {
        clearErrors()
        let key = try withMemoryBIO(pem, source: source) { bio in
            PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
        }
        guard let key else { throw error(.invalidKey, "\(source) holds no readable unencrypted PEM private key") }
        return try checkedPair(checkedP256(key, source: source), source: source)
    }

    /// Reads the first PEM private key of file `path`, as `privateKey(pem:source:)` does.
    ///
    /// `BIO_new_file(path, "r")` opens the file (NULL and a system error on the queue when it cannot), so the
    /// key's text goes from the file to OpenSSL without a copy in Swift memory.
    static func privateKey(file path: String) throws(TLSError) -> OpaquePointer {
        clearErrors()
        guard let bio = BIO_new_file(path, "r") else { throw error(.fileUnreadable, "cannot open \(path)") }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil) else {
            throw error(.invalidKey, "\(path) holds no readable unencrypted PEM private key")
        }
        return try checkedPair(checkedP256(key, source: path), source: path)
    }

    /// Reads one PEM public key (`BEGIN PUBLIC KEY`, SubjectPublicKeyInfo) from memory and checks it is a P-256
    /// key. `PEM_read_bio_PUBKEY(bp, NULL, NULL, NULL)` returns a new key or NULL.
    static func publicKey(pem: UnsafeRawBufferPointer, source: String) throws(TLSError) -> OpaquePointer {
        clearErrors()
        let key = try withMemoryBIO(pem, source: source) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let key else { throw error(.invalidKey, "\(source) holds no readable PEM public key") }
        return try checkedP256(key, source: source)
    }

    /// A new P-256 key pair: `EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL)`, `EVP_PKEY_keygen_init`,
    /// `EVP_PKEY_CTX_set_group_name(ctx, "P-256")`, `EVP_PKEY_generate(ctx, &key)`, each 1 (or non-NULL) on
    /// success.
    static func generateP256() throws(TLSError) -> OpaquePointer {
        clearErrors()
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw error(.cryptoFailed, "cannot make an EC key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else { throw error(.cryptoFailed, "cannot generate a P-256 key") }
        return key
    }

    /// The key's public half as PEM SubjectPublicKeyInfo (`PEM_write_bio_PUBKEY`, 1 on success).
    static func publicKeyPEM(_ key: OpaquePointer) throws(TLSError) -> String {
        try writingPEM("public key") { bio in PEM_write_bio_PUBKEY(bio, key) }
    }

    /// The private key as unencrypted PKCS#8 PEM, `BEGIN PRIVATE KEY` (`PEM_write_bio_PrivateKey` with no
    /// cipher writes PKCS#8; 1 on success).
    static func privateKeyPEM(_ key: OpaquePointer) throws(TLSError) -> String {
        try writingPEM("private key") { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
    }

    /// Checks `key` (owned) is an EC key on P-256, freeing it otherwise.
    ///
    /// `EVP_PKEY_get_base_id` gives the key type (`EVP_PKEY_EC`); `EVP_PKEY_get_group_name(key, buf, size,
    /// &len)` writes the curve's name (`prime256v1` for P-256), 1 on success.
    private static func checkedP256(_ key: OpaquePointer, source: String) throws(TLSError) -> OpaquePointer {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else {
            EVP_PKEY_free(key)
            throw error(.invalidKey, "\(source) is not an EC key (ES256 needs a P-256 key)")
        }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        let curve = EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 ? string(fromC: name) : "?"
        guard curve == SN_X9_62_prime256v1 else {
            EVP_PKEY_free(key)
            throw error(.invalidKey, "\(source) is an EC key on \(curve), not P-256 (prime256v1)")
        }
        return key
    }

    /// Checks a private key's stored public point is its own, freeing it otherwise: a key file that contradicts
    /// itself would sign with one half and be verified with the other, and every token it made would be refused
    /// far from the cause.
    ///
    /// `EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL)` makes a context for the key (NULL on failure);
    /// `EVP_PKEY_pairwise_check(ctx)` returns 1 when the private scalar yields the public point.
    private static func checkedPair(_ key: OpaquePointer, source: String) throws(TLSError) -> OpaquePointer {
        let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil)
        defer { EVP_PKEY_CTX_free(context) }
        guard let context, EVP_PKEY_pairwise_check(context) == 1 else {
            EVP_PKEY_free(key)
            throw error(.invalidKey, "\(source) holds a private key whose public point is not its own")
        }
        return key
    }

    // MARK: ECDSA with SHA-256

    /// A DER `ECDSA-Sig-Value` over SHA-256 of `message`.
    ///
    /// `EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, key)` then `EVP_DigestSign(ctx, sig, &siglen, tbs,
    /// tbslen)`, each 1 on success; called first with `sig` NULL it sets `siglen` to the largest signature
    /// size, and the second call sets it to the size written.
    static func signSHA256(_ key: OpaquePointer, _ message: UnsafeRawBufferPointer) throws(TLSError) -> [UInt8] {
        clearErrors()
        guard let context = EVP_MD_CTX_new() else { throw error(.cryptoFailed, "cannot make a digest context") }
        defer { EVP_MD_CTX_free(context) }
        let data = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var size = 0
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1,
            EVP_DigestSign(context, nil, &size, data, message.count) == 1
        else { throw error(.cryptoFailed, "cannot start an ECDSA signature") }
        var signature = [UInt8](repeating: 0, count: size)
        guard EVP_DigestSign(context, &signature, &size, data, message.count) == 1 else {
            throw error(.cryptoFailed, "ECDSA signing failed")
        }
        return Array(signature[..<size])
    }

    /// Whether DER `signature` is a valid ECDSA signature by `key` over SHA-256 of `message`.
    ///
    /// `EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, key)`, 1 on success, then `EVP_DigestVerify(ctx,
    /// sig, siglen, tbs, tbslen)`: 1 for a valid signature, 0 for an invalid one, negative for another failure
    /// (a signature that is not DER). Anything but 1 is "not valid"; the queue is cleared either way.
    static func verifySHA256(_ key: OpaquePointer, _ message: UnsafeRawBufferPointer, signature: [UInt8]) -> Bool {
        clearErrors()
        defer { clearErrors() }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        let data = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, data, message.count) == 1
    }

    /// The 64-byte `r‖s` form (each big-endian, left-padded to 32 bytes; RFC 7518 §3.4) of a DER ECDSA
    /// signature on P-256.
    ///
    /// `d2i_ECDSA_SIG(NULL, &p, len)` parses one DER value, advancing `p` past it, and returns a new
    /// `ECDSA_SIG` or NULL; `ECDSA_SIG_get0` borrows its `r` and `s`; `BN_bn2binpad(n, to, 32)` writes `n`
    /// big-endian in exactly 32 bytes, or returns -1 when it does not fit.
    static func rawSignature(fromDER der: [UInt8]) throws(TLSError) -> [UInt8] {
        clearErrors()
        var raw = [UInt8](repeating: 0, count: 64)
        let parsed: Bool = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { return false }
            defer { ECDSA_SIG_free(signature) }
            // Trailing bytes after the DER value make it another signature text; refuse them.
            guard let cursor, cursor == buffer.baseAddress! + buffer.count else { return false }
            var r: OpaquePointer?
            var s: OpaquePointer?
            ECDSA_SIG_get0(signature, &r, &s)
            return raw.withUnsafeMutableBufferPointer { out in
                BN_bn2binpad(r, out.baseAddress, 32) == 32 && BN_bn2binpad(s, out.baseAddress! + 32, 32) == 32
            }
        }
        guard parsed else { throw error(.invalidSignature, "not a DER ECDSA signature on P-256") }
        return raw
    }

    /// The DER form of a 64-byte `r‖s` signature.
    ///
    /// `BN_bin2bn(s, 32, NULL)` makes a new big number from big-endian bytes (NULL on failure);
    /// `ECDSA_SIG_set0(sig, r, s)` takes ownership of both on success (1); `i2d_ECDSA_SIG(sig, &p)` writes the
    /// DER encoding at `p` and returns its length (with `p` NULL, only the length), negative on failure.
    static func derSignature(fromRaw raw: [UInt8]) throws(TLSError) -> [UInt8] {
        guard raw.count == 64 else {
            throw TLSError(code: .invalidSignature, message: "an ES256 signature is 64 bytes, not \(raw.count)")
        }
        clearErrors()
        guard let signature = ECDSA_SIG_new() else { throw error(.cryptoFailed, "cannot make an ECDSA signature") }
        defer { ECDSA_SIG_free(signature) }
        let (r, s) = raw.withUnsafeBufferPointer { buffer in
            (BN_bin2bn(buffer.baseAddress, 32, nil), BN_bin2bn(buffer.baseAddress! + 32, 32, nil))
        }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            throw error(.cryptoFailed, "cannot build an ECDSA signature")
        }
        let size = i2d_ECDSA_SIG(signature, nil)
        guard size > 0 else { throw error(.cryptoFailed, "cannot encode an ECDSA signature") }
        var der = [UInt8](repeating: 0, count: Int(size))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        guard written == size else { throw error(.cryptoFailed, "cannot encode an ECDSA signature") }
        return der
    }

    // MARK: Memory BIOs

    /// Runs `body` with a read-only memory BIO over `bytes`.
    ///
    /// `BIO_new_mem_buf(buf, len)` makes a BIO that reads `buf` in place (the bytes must outlive it) and returns
    /// NULL on failure; `BIO_free` releases it.
    static func withMemoryBIO<T>(
        _ bytes: UnsafeRawBufferPointer, source: String, _ body: (OpaquePointer) -> T
    ) throws(TLSError) -> T {
        guard let bio = nonNull(bytes, { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw error(.cryptoFailed, "cannot read \(source)")
        }
        defer { BIO_free(bio) }
        return body(bio)
    }

    /// What `write` puts into a fresh memory BIO, as text.
    ///
    /// `BIO_new(BIO_s_mem())` makes a growable memory BIO; `BIO_get_mem_data` points at its bytes without
    /// copying them.
    private static func writingPEM(_ what: String, _ write: (OpaquePointer) -> Int32) throws(TLSError) -> String {
        clearErrors()
        guard let bio = BIO_new(BIO_s_mem()) else { throw error(.cryptoFailed, "cannot make a memory BIO") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw error(.cryptoFailed, "cannot write the \(what) as PEM") }
        var data: UnsafeMutablePointer<CChar>?
        let count = cw_BIO_get_mem_data(bio, &data)
        guard let data, count > 0 else { throw error(.cryptoFailed, "cannot write the \(what) as PEM") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
    }
}

/// `body` with `bytes`, or with an empty buffer at a valid address when `bytes` has none (C functions that take a
/// pointer and a length may refuse NULL even with length 0).
func nonNull<R>(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if bytes.baseAddress != nil { return body(bytes) }
    return withUnsafeBytes(of: UInt8(0)) { body(UnsafeRawBufferPointer(rebasing: $0[..<0])) }
}

/// The text of a NUL-terminated C string in `buffer` (all of it if it has no NUL).
func string(fromC buffer: [CChar]) -> String {
    let end = buffer.firstIndex(of: 0) ?? buffer.endIndex
    return String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The digests the crypto facet offers.
enum DigestAlgorithm {
    case sha1
    case sha256
}
