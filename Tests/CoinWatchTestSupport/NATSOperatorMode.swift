import CoinWatchCore
import Foundation

/// A NATS "operator mode" set-up for one test (decentralised authentication, what `--cluster-creds` is for): an
/// operator, a system account and an account with JetStream, each an Ed25519 NKey with a JWT signed by the
/// operator, and one user of that account whose credentials file holds its JWT and NKey seed.
///
/// Made with the `openssl` command (Ed25519 keys and signatures) and the encodings of the NATS documentation:
/// an NKey is the base32 text (no padding) of a type prefix byte, the 32-byte key and a CRC-16 (XMODEM, low
/// byte first); a seed's two prefix bytes carry both the seed prefix and the key's type; a JWT's algorithm is
/// `ed25519-nkey`, signed by the issuer's key over `header.payload`.
public final class NATSOperatorMode: Sendable {
    public let directory: TemporaryDirectory
    /// `nats-server -c` this (with `-js`): the operator, the system account and the account preloaded.
    public let serverConfiguration: String
    /// The user's credentials file (`natsOptions_SetUserCredentialsFromFiles`).
    public let credentialsFile: String
    /// The same user signed by an account the server does not know.
    public let strangerCredentialsFile: String
    /// The user's NKey seed (its secret, in both credentials files).
    public let userSeed: String

    public init() throws {
        directory = try TemporaryDirectory(prefix: "nats-operator")
        let base = directory.path
        let op = try Self.key("operator", in: base)
        let system = try Self.key("system", in: base)
        let account = try Self.key("account", in: base)
        let stranger = try Self.key("stranger", in: base)
        let user = try Self.key("user", in: base)
        let operatorID = Self.publicKey(.operator, op.publicKey)
        let systemID = Self.publicKey(.account, system.publicKey)
        let accountID = Self.publicKey(.account, account.publicKey)
        let strangerID = Self.publicKey(.account, stranger.publicKey)
        let userID = Self.publicKey(.user, user.publicKey)
        let unlimited: [String: Any] = [
            "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": true, "conn": -1,
            "leaf": -1,
        ]
        let jetStream = ["mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1]
        let operatorJWT = try Self.jwt(
            issuer: operatorID, subject: operatorID, name: "test-operator", signer: op.file,
            nats: ["type": "operator", "version": 2, "system_account": systemID])
        let systemJWT = try Self.jwt(
            issuer: operatorID, subject: systemID, name: "SYS", signer: op.file,
            nats: ["type": "account", "version": 2, "limits": unlimited])
        let accountJWT = try Self.jwt(
            issuer: operatorID, subject: accountID, name: "coinwatch", signer: op.file,
            nats: ["type": "account", "version": 2, "limits": unlimited.merging(jetStream) { $1 }])
        let userClaims: [String: Any] = ["type": "user", "version": 2, "subs": -1, "data": -1, "payload": -1]
        let userJWT = try Self.jwt(
            issuer: accountID, subject: userID, name: "node", signer: account.file, nats: userClaims)
        let strangerJWT = try Self.jwt(
            issuer: strangerID, subject: userID, name: "node", signer: stranger.file, nats: userClaims)
        let operatorFile = base + "/operator.jwt"
        try operatorJWT.write(toFile: operatorFile, atomically: true, encoding: .utf8)
        serverConfiguration = base + "/server.conf"
        try """
            operator: "\(operatorFile)"
            system_account: \(systemID)
            resolver: MEMORY
            resolver_preload: {
              \(systemID): "\(systemJWT)"
              \(accountID): "\(accountJWT)"
            }

            """.write(toFile: serverConfiguration, atomically: true, encoding: .utf8)
        let seed = Self.seed(.user, user.seed)
        userSeed = seed
        credentialsFile = base + "/node.creds"
        try Self.credentials(userJWT, seed).write(toFile: credentialsFile, atomically: true, encoding: .utf8)
        strangerCredentialsFile = base + "/stranger.creds"
        try Self.credentials(strangerJWT, seed).write(toFile: strangerCredentialsFile, atomically: true, encoding: .utf8)
    }

    // MARK: Keys

    enum KeyType: UInt8 {
        case `operator` = 112  // 14 << 3: "O…"
        case account = 0  // "A…"
        case user = 160  // 20 << 3: "U…"
    }

    struct Key {
        var file: String
        var seed: [UInt8]
        var publicKey: [UInt8]
    }

    /// A new Ed25519 key in `name.pem`, with its raw 32-byte seed and public key (the last 32 bytes of the
    /// PKCS #8 and SubjectPublicKeyInfo DER encodings).
    static func key(_ name: String, in base: String) throws -> Key {
        let file = "\(base)/\(name).pem"
        try OpenSSLCommand.succeed(["genpkey", "-algorithm", "ed25519", "-out", file])
        let privateDER = try OpenSSLCommand.succeed(["pkey", "-in", file, "-outform", "DER"]).stdout
        let publicDER = try OpenSSLCommand.succeed(["pkey", "-in", file, "-pubout", "-outform", "DER"]).stdout
        return Key(file: file, seed: Array(privateDER.suffix(32)), publicKey: Array(publicDER.suffix(32)))
    }

    static func publicKey(_ type: KeyType, _ key: [UInt8]) -> String {
        checked([type.rawValue] + key)
    }

    static func seed(_ type: KeyType, _ seed: [UInt8]) -> String {
        let seedPrefix: UInt8 = 18 << 3  // "S…"
        return checked([seedPrefix | (type.rawValue >> 5), (type.rawValue & 31) << 3] + seed)
    }

    private static func checked(_ raw: [UInt8]) -> String {
        var crc: UInt16 = 0
        for byte in raw {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return base32(raw + [UInt8(crc & 0xFF), UInt8(crc >> 8)])
    }

    static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var text = ""
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                text.append(alphabet[(buffer >> bits) & 31])
            }
        }
        if bits > 0 { text.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return text
    }

    // MARK: JWTs

    static func jwt(issuer: String, subject: String, name: String, signer: String, nats: [String: Any]) throws
        -> String
    {
        let claims: [String: Any] = [
            "jti": base32(Array(UUID().uuidString.utf8)), "iat": Int(Date().timeIntervalSince1970), "iss": issuer,
            "sub": subject, "name": name, "nats": nats,
        ]
        let header = Base64.encodeURL(Array(#"{"typ":"JWT","alg":"ed25519-nkey"}"#.utf8))
        let payload = Base64.encodeURL(Array(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])))
        let signed = header + "." + payload
        // Ed25519 signs in one go, from a file ("unable to determine file size for oneshot operation" from stdin).
        let input = signer + ".signing"
        try signed.write(toFile: input, atomically: true, encoding: .utf8)
        let signature = try OpenSSLCommand.succeed(["pkeyutl", "-sign", "-inkey", signer, "-rawin", "-in", input]).stdout
        return signed + "." + Base64.encodeURL(signature)
    }

    static func credentials(_ jwt: String, _ seed: String) -> String {
        """
        -----BEGIN NATS USER JWT-----
        \(jwt)
        ------END NATS USER JWT------

        -----BEGIN USER NKEY SEED-----
        \(seed)
        ------END USER NKEY SEED------

        """
    }
}
