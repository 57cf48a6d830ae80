public import CoinWatchModel
public import CoinWatchCore

/// A credential as a caller presents it, parsed but not yet checked against the store.
///
/// Three kinds, told apart by the token's prefix so that an operator (or a secret scanner) recognises one in a
/// leaked file:
/// - a service key, `cwk_<16 hex digits: the key id>_<43 base64url characters: 32 secret bytes>`;
/// - a device secret, `cwd_<43 base64url characters: 32 secret bytes>_<the device id in base64url>`: it names its
///   device, so a valid secret used for another device is told apart from a wrong one (PERMISSION_DENIED, not
///   UNAUTHENTICATED);
/// - anything else, kept as opaque bytes: the `--publish-token` of older setups, checked against that token.
public enum Credential: Sendable, Hashable {
    case serviceKey(id: String, secret: [UInt8])
    case deviceSecret(device: DeviceID, secret: [UInt8])
    case opaque([UInt8])

    static let keyPrefix = Array("cwk_".utf8)
    static let devicePrefix = Array("cwd_".utf8)
    static let keyIDLength = 16
    static let secretBytes = 32
    /// 32 bytes in base64url without padding.
    static let secretTextLength = 43
    /// The longest token accepted; longer values are refused before any work is done on them.
    public static let maxTokenLength = 512

    /// Parses a token (the part after `Bearer `).
    ///
    /// - Throws: `CredentialFailure.malformed` for an empty or over-long token, one with a character outside
    ///   visible ASCII, or one with a CoinWatch prefix whose rest does not follow its format (a truncated or
    ///   mangled key is reported as malformed rather than passed on as an opaque token).
    public init(token: some Collection<UInt8>) throws(CredentialFailure) {
        let bytes = Array(token)
        guard !bytes.isEmpty, bytes.count <= Self.maxTokenLength else { throw .malformed }
        for byte in bytes where byte < 0x21 || byte > 0x7E { throw .malformed }
        if bytes.starts(with: Self.keyPrefix) {
            self = try Self.parseServiceKey(bytes)
        } else if bytes.starts(with: Self.devicePrefix) {
            self = try Self.parseDeviceSecret(bytes)
        } else {
            self = .opaque(bytes)
        }
    }

    private static func parseServiceKey(_ bytes: [UInt8]) throws(CredentialFailure) -> Credential {
        let idStart = keyPrefix.count
        let separator = idStart + keyIDLength
        guard bytes.count == separator + 1 + secretTextLength, bytes[separator] == UInt8(ascii: "_") else {
            throw .malformed
        }
        let id = bytes[idStart..<separator]
        guard id.allSatisfy(isLowerHex), let secret = Base64.decodeURL(String(decoding: bytes[(separator + 1)...], as: UTF8.self)),
              secret.count == secretBytes else {
            throw .malformed
        }
        return .serviceKey(id: String(decoding: id, as: UTF8.self), secret: secret)
    }

    private static func parseDeviceSecret(_ bytes: [UInt8]) throws(CredentialFailure) -> Credential {
        let secretStart = devicePrefix.count
        let separator = secretStart + secretTextLength
        guard bytes.count > separator + 1, bytes[separator] == UInt8(ascii: "_"),
              let secret = Base64.decodeURL(String(decoding: bytes[secretStart..<separator], as: UTF8.self)), secret.count == secretBytes,
              let deviceBytes = Base64.decodeURL(String(decoding: bytes[(separator + 1)...], as: UTF8.self)) else {
            throw .malformed
        }
        // The id in a token is the canonical one the server put there; any other spelling is not a token it made.
        let text = String(decoding: deviceBytes, as: UTF8.self)
        guard let device = try? DeviceID(validating: text), device.rawValue == text else { throw .malformed }
        return .deviceSecret(device: device, secret: secret)
    }

    static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// The token text of a service key.
    static func serviceKeyToken(id: String, secret: [UInt8]) -> String {
        "cwk_\(id)_\(Base64.encodeURL(secret))"
    }

    /// The token text of a device secret.
    static func deviceToken(device: DeviceID, secret: [UInt8]) -> String {
        "cwd_\(Base64.encodeURL(secret))_\(Base64.encodeURL(Array(device.rawValue.utf8)))"
    }

    /// The token's text, in the one spelling the server writes: a secret, so never for a log or a message.
    public var tokenText: String {
        switch self {
        case .serviceKey(let id, let secret): Self.serviceKeyToken(id: id, secret: secret)
        case .deviceSecret(let device, let secret): Self.deviceToken(device: device, secret: secret)
        case .opaque(let bytes): String(decoding: bytes, as: UTF8.self)
        }
    }

    /// How the credential is named in logs: the key id, the device, or only its kind. Never any secret.
    public var logName: String {
        switch self {
        case .serviceKey(let id, _): "key \(id)"
        case .deviceSecret(let device, _): "device \(device)"
        case .opaque: "a token that is not a CoinWatch key"
        }
    }
}

/// Why a presented credential was not accepted. The reason goes to the server's log (with the key id or device,
/// never a secret); the caller learns only UNAUTHENTICATED with a message that does not tell the reasons apart.
public struct CredentialFailure: CoinWatchError {
    /// Why, for the log and the per-reason counters.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// Not a token at all: empty, too long, bad characters, a scheme other than Bearer, or a mangled key.
        public static let malformed = Code("malformed")
        /// A well-formed service key whose id the server does not know.
        public static let unknownKey = Code("unknownKey")
        /// A key or device secret whose secret does not match.
        public static let wrongSecret = Code("wrongSecret")
        /// A revoked key.
        public static let revoked = Code("revoked")
        /// A device secret for a device that has none on record.
        public static let unclaimedDevice = Code("unclaimedDevice")
        /// An opaque token when no `--publish-token` is set, or a different one.
        public static let unknownToken = Code("unknownToken")
    }

    public let code: Code
    /// The reason as the log prints it.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public static let malformed = CredentialFailure(.malformed, "malformed credential")
    public static let unknownKey = CredentialFailure(.unknownKey, "unknown key")
    public static let wrongSecret = CredentialFailure(.wrongSecret, "wrong secret")
    public static let revoked = CredentialFailure(.revoked, "revoked key")
    public static let unclaimedDevice = CredentialFailure(.unclaimedDevice, "device has no secret")
    public static let unknownToken = CredentialFailure(.unknownToken, "unknown token")
}
