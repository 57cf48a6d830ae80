public import CoinWatchCore

/// A failure of the TLS and crypto layer.
///
/// Callers branch on `code` (a certificate the peer cannot verify is handled differently from a peer that sent
/// garbage) and show `description`, which ends with OpenSSL's own error-queue text when OpenSSL reported the
/// failure, so an operator can match it against OpenSSL's documentation.
public struct TLSError: CoinWatchError {
    /// What kind of failure this is. A struct of constants rather than an enum so new kinds can be added without
    /// breaking exhaustive `switch`es in client code.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// A key could not be read: not PEM, encrypted, of the wrong type or curve.
        public static let invalidKey = Code("invalidKey")
        /// A signature does not have the shape its algorithm requires (not a DER ECDSA signature, not 64 bytes).
        public static let invalidSignature = Code("invalidSignature")
        /// A certificate (or chain) could not be read or does not match its key.
        public static let invalidCertificate = Code("invalidCertificate")
        /// A key, certificate or CA file could not be opened or read.
        public static let fileUnreadable = Code("fileUnreadable")
        /// An argument was rejected before OpenSSL saw it (an empty host name, a malformed token, ...).
        public static let invalidArgument = Code("invalidArgument")
        /// The system's random source failed; nothing secret may be made until it works again.
        public static let randomUnavailable = Code("randomUnavailable")
        /// An OpenSSL call that should not fail did (out of memory, a missing algorithm provider).
        public static let cryptoFailed = Code("cryptoFailed")
        /// This side refused the peer's certificate: `certificateProblem` says why (expired, unknown CA, host
        /// name mismatch, ...).
        public static let certificateVerificationFailed = Code("certificateVerificationFailed")
        /// The handshake failed for another reason: no protocol version or cipher in common, the peer refused
        /// this side's certificate (its alert is in the message), a required client certificate was missing.
        public static let handshakeFailed = Code("handshakeFailed")
        /// The peer sent bytes that are not TLS (a plaintext request, garbage, a record too long) or broke the
        /// protocol after the handshake.
        public static let protocolError = Code("protocolError")
        /// The peer closed the connection: during the handshake, or before this side wrote what it had.
        public static let peerClosed = Code("peerClosed")
        /// More bytes were buffered than the session's bound allows.
        public static let bufferLimitExceeded = Code("bufferLimitExceeded")

        public var description: String {
            name
        }
    }

    /// The kind of failure, for branching.
    public var code: Code
    /// What was being done and what went wrong, for a person.
    public var message: String
    /// OpenSSL's error queue at the time of the failure, oldest first (`error:0480006C:PEM routines::no start
    /// line`); empty when OpenSSL reported nothing.
    public var openSSLErrors: [String]

    /// Why the peer's certificate was refused, for `.certificateVerificationFailed`; nil otherwise.
    public var certificateProblem: CertificateProblem?

    public init(
        code: Code, message: String, openSSLErrors: [String] = [], certificateProblem: CertificateProblem? = nil
    ) {
        self.code = code
        self.message = message
        self.openSSLErrors = openSSLErrors
        self.certificateProblem = certificateProblem
    }

    public var description: String {
        openSSLErrors.isEmpty ? "\(code): \(message)" : "\(code): \(message) (OpenSSL: \(openSSLErrors.joined(separator: "; ")))"
    }
}

extension TLSError {
    /// Why certificate verification failed: OpenSSL's `X509_V_ERR_*` number and its text (`certificate has
    /// expired`, `unable to get local issuer certificate`, `hostname mismatch`). The common ones have names.
    public struct CertificateProblem: Hashable, Sendable, CustomStringConvertible {
        /// The `X509_V_ERR_*` value (stable across OpenSSL releases: it is part of their ABI).
        public var rawValue: Int32
        /// OpenSSL's description of it.
        public var description: String

        public init(rawValue: Int32, description: String) {
            self.rawValue = rawValue
            self.description = description
        }

        public static func == (a: Self, b: Self) -> Bool { a.rawValue == b.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    }
}
