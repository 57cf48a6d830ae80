import CoinWatchCore
import CoinWatchTLS
import CoinWatchTestSupport
import Foundation
import Testing

/// The ES256 example of RFC 7515 Appendix A.3: its public key, as JWK coordinates, and a token it signed.
enum RFC7515Example {
    static let x = Base64.decodeURL("f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU")!
    static let y = Base64.decodeURL("x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")!
    static let token = "eyJhbGciOiJFUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    /// SubjectPublicKeyInfo for a P-256 point: the fixed DER prefix (id-ecPublicKey, prime256v1, a 66-byte BIT
    /// STRING) and the uncompressed point.
    static var publicKeyPEM: String {
        pem("PUBLIC KEY", bytes(hex: "3059301306072a8648ce3d020106082a8648ce3d030107034200") + [4] + x + y)
    }

    /// SEC1 ECPrivateKey with scalar `d` and the example's public point: version 1, the scalar, the curve and
    /// the point. Any `d` but the example's (which is not used here) makes a key that contradicts itself.
    static func privateKeyPEM(d: [UInt8]) -> String {
        pem(
            "EC PRIVATE KEY",
            bytes(hex: "30770201010420") + d + bytes(hex: "a00a06082a8648ce3d030107a144034200") + [4] + x + y)
    }
}

/// The `TLSError` `body` throws; nil if it throws nothing (or something else).
func failure(_ body: () throws -> Void) -> TLSError? {
    do {
        try body()
        return nil
    } catch {
        return error as? TLSError
    }
}

/// DER bytes as a PEM block of `label`.
func pem(_ label: String, _ der: [UInt8]) -> String {
    let text = Base64.encode(der)
    var lines = [String]()
    var start = text.startIndex
    while start < text.endIndex {
        let end = text.index(start, offsetBy: 64, limitedBy: text.endIndex) ?? text.endIndex
        lines.append(String(text[start..<end]))
        start = end
    }
    return "-----BEGIN \(label)-----\n" + lines.joined(separator: "\n") + "\n-----END \(label)-----\n"
}

@Suite("ES256 keys and signatures")
struct ES256Tests {
    @Test("a signature verifies with the key's public half and with nothing else")
    func signAndVerify() throws {
        let key = try ES256PrivateKey.generate()
        let other = try ES256PrivateKey.generate()
        let message = Array("the message".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.count == 64)
        let publicKey = try key.publicKey()
        #expect(publicKey.isValidSignature(signature, for: message))
        #expect(!publicKey.isValidSignature(signature, for: Array("the messagE".utf8)))
        #expect(!(try other.publicKey()).isValidSignature(signature, for: message))
        for index in [0, 31, 32, 63] {
            var flipped = signature
            flipped[index] ^= 1
            #expect(!publicKey.isValidSignature(flipped, for: message))
        }
        #expect(!publicKey.isValidSignature(signature.dropLast(), for: message))
        #expect(!publicKey.isValidSignature(signature + [0], for: message))
        #expect(!publicKey.isValidSignature([UInt8](repeating: 0, count: 64), for: message))
        #expect(publicKey.isValidSignature(try key.signature(for: [UInt8]()), for: [UInt8]()))
    }

    @Test("RFC 7515's ES256 example verifies")
    func rfcExample() throws {
        let publicKey = try ES256PublicKey(pem: RFC7515Example.publicKeyPEM.utf8)
        let parts = RFC7515Example.token.split(separator: ".")
        let signingInput = Array("\(parts[0]).\(parts[1])".utf8)
        let signature = try #require(Base64.decodeURL(parts[2]))
        #expect(publicKey.isValidSignature(signature, for: signingInput))
        #expect(!publicKey.isValidSignature(signature, for: signingInput.dropLast()))
        #expect(try publicKey.publicKeyPEM() == RFC7515Example.publicKeyPEM)
    }

    @Test("a private key whose stored public point is not its own is refused")
    func inconsistentKey() throws {
        let mismatched = RFC7515Example.privateKeyPEM(d: [UInt8](repeating: 0x11, count: 32))
        let error = try #require(failure { _ = try ES256PrivateKey(pem: mismatched.utf8) })
        #expect(error.code == .invalidKey)
        #expect(error.message.contains("public"))
    }

    @Test("PEM written is PEM read: PKCS#8 private key and SubjectPublicKeyInfo")
    func pemRoundTrip() throws {
        let key = try ES256PrivateKey.generate()
        let pkcs8 = try key.pkcs8PEM()
        #expect(pkcs8.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let reread = try ES256PrivateKey(pem: pkcs8.utf8)
        #expect(try reread.publicKeyPEM() == (try key.publicKeyPEM()))
        #expect(try key.publicKeyPEM().hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        let message = Array("m".utf8)
        #expect(try key.publicKey().isValidSignature(try reread.signature(for: message), for: message))
    }

    @Test("a .p8 file made by openssl signs what openssl verifies, and the reverse")
    func againstOpenSSL() async throws {
        let directory = try TemporaryDirectory(prefix: "es256")
        let keyPath = directory.appending("AuthKey_TEST.p8").path
        let publicPath = directory.appending("public.pem").path
        let messagePath = directory.appending("message").path
        let signaturePath = directory.appending("signature.der").path
        // PKCS#8 P-256, Apple's AuthKey format.
        try await OpenSSLCommand.succeed(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyPath])
        try await OpenSSLCommand.succeed(["pkey", "-in", keyPath, "-pubout", "-out", publicPath])
        let message = Array("{\"iss\":\"TEAMID1234\",\"iat\":1700000000}".utf8)
        try Data(message).write(to: URL(fileURLWithPath: messagePath))

        // Swift signs, openssl verifies (JWS r‖s converted to DER for it).
        let key = try ES256PrivateKey(contentsOfFile: keyPath)
        let raw = try key.signature(for: message)
        try Data(try ECDSASignature.der(fromRaw: raw)).write(to: URL(fileURLWithPath: signaturePath))
        let verified = try await OpenSSLCommand.run(
            ["dgst", "-sha256", "-verify", publicPath, "-signature", signaturePath, messagePath])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.output.contains("Verified OK"))

        // openssl signs (DER), Swift verifies both forms.
        try await OpenSSLCommand.succeed(["dgst", "-sha256", "-sign", keyPath, "-out", signaturePath, messagePath])
        let der = Array(try Data(contentsOf: URL(fileURLWithPath: signaturePath)))
        let publicKey = try ES256PublicKey(pem: Array(try Data(contentsOf: URL(fileURLWithPath: publicPath))))
        #expect(publicKey.isValidDERSignature(der, for: message))
        #expect(publicKey.isValidSignature(try ECDSASignature.raw(fromDER: der), for: message))
        #expect(!publicKey.isValidSignature(try ECDSASignature.raw(fromDER: der), for: message + [0]))

        // A tampered signature is refused by openssl too.
        var tampered = raw
        tampered[10] ^= 0x80
        try Data(try ECDSASignature.der(fromRaw: tampered)).write(to: URL(fileURLWithPath: signaturePath))
        let refused = try await OpenSSLCommand.run(
            ["dgst", "-sha256", "-verify", publicPath, "-signature", signaturePath, messagePath])
        #expect(refused.status != 0)
    }

    @Test("a SEC1 EC PRIVATE KEY from openssl reads too")
    func sec1Key() async throws {
        let result = try await OpenSSLCommand.succeed(["ecparam", "-name", "prime256v1", "-genkey", "-noout"])
        #expect(result.output.contains("BEGIN EC PRIVATE KEY"))
        let key = try ES256PrivateKey(pem: result.stdout)
        #expect(try key.publicKey().isValidSignature(try key.signature(for: [1, 2, 3]), for: [1, 2, 3]))
    }

    @Test("r‖s and DER convert both ways; malformed signatures are refused")
    func signatureForms() throws {
        let key = try ES256PrivateKey.generate()
        for _ in 0..<20 {
            let der = try key.derSignature(for: [7])
            let raw = try ECDSASignature.raw(fromDER: der)
            #expect(raw.count == 64)
            #expect(try ECDSASignature.der(fromRaw: raw) == der)
        }
        // Small integers are left-padded to 32 bytes.
        let small = [UInt8](repeating: 0, count: 31) + [5] + [UInt8](repeating: 0, count: 31) + [9]
        #expect(try ECDSASignature.raw(fromDER: try ECDSASignature.der(fromRaw: small)) == small)
        #expect(try ECDSASignature.der(fromRaw: small) == bytes(hex: "3006020105020109"))

        for bad in [[], [0x30], bytes(hex: "3006020105020109") + [0], bytes(hex: "3006020105"), Array("garbage".utf8)] {
            #expect(failure { _ = try ECDSASignature.raw(fromDER: bad) }?.code == .invalidSignature)
        }
        // r wider than 32 bytes cannot be a P-256 signature.
        let wide = bytes(hex: "3026022101") + [UInt8](repeating: 0x11, count: 32) + bytes(hex: "020101")
        #expect(throws: TLSError.self) { try ECDSASignature.raw(fromDER: wide) }
        for count in [0, 63, 65] {
            #expect(throws: TLSError.self) { try ECDSASignature.der(fromRaw: [UInt8](repeating: 1, count: count)) }
        }
    }

    @Test("keys that are not unencrypted P-256 are refused with a reason, never a prompt")
    func refusedKeys() async throws {
        let directory = try TemporaryDirectory(prefix: "es256-bad")
        let p384 = try await OpenSSLCommand.succeed(
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]).stdout
        let ed25519 = try await OpenSSLCommand.succeed(["genpkey", "-algorithm", "ED25519"]).stdout
        let encryptedPath = directory.appending("encrypted.pem").path
        try await OpenSSLCommand.succeed([
            "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes-128-cbc", "-pass", "pass:secret",
            "-out", encryptedPath,
        ])

        let wrongCurve = try #require(failure { _ = try ES256PrivateKey(pem: p384) })
        #expect(wrongCurve.code == .invalidKey)
        #expect(wrongCurve.message.contains("secp384r1"))
        #expect(failure { _ = try ES256PrivateKey(pem: ed25519) }?.code == .invalidKey)
        let encrypted = try #require(failure { _ = try ES256PrivateKey(contentsOfFile: encryptedPath) })
        #expect(encrypted.code == .invalidKey)
        #expect(!encrypted.openSSLErrors.isEmpty)
        let garbage = try #require(failure { _ = try ES256PrivateKey(pem: "not a key".utf8) })
        #expect(garbage.code == .invalidKey)
        #expect(garbage.description.contains("OpenSSL:"))
        #expect(failure { _ = try ES256PrivateKey(pem: [UInt8]()) }?.code == .invalidKey)
        let missing = try #require(failure { _ = try ES256PrivateKey(contentsOfFile: directory.appending("none.p8").path) })
        #expect(missing.code == .fileUnreadable)
        #expect(missing.description.contains("No such file"))

        // A private key is not a public key, and a public key of the wrong curve is refused.
        let p384Public = try await OpenSSLCommand.succeed(["pkey", "-pubout"], input: p384).stdout
        #expect(failure { _ = try ES256PublicKey(pem: p384Public) }?.code == .invalidKey)
        let key = try ES256PrivateKey.generate()
        #expect(failure { _ = try ES256PublicKey(pem: try! key.pkcs8PEM().utf8) }?.code == .invalidKey)
    }

    @Test("one key signs from several threads at once")
    func concurrentSigning() async throws {
        let key = try ES256PrivateKey.generate()
        let publicKey = try key.publicKey()
        let valid = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let message = Array("message \(index)".utf8)
                    var ok = true
                    for _ in 0..<25 {
                        let signature = try key.signature(for: message)
                        ok = ok && publicKey.isValidSignature(signature, for: message)
                    }
                    return ok
                }
            }
            return try await group.reduce(true) { $0 && $1 }
        }
        #expect(valid)
    }
}
