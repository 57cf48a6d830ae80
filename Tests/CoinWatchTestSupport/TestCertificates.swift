import Foundation
import Synchronization

/// A certificate and its private key, as PEM files.
public struct TestIdentity: Hashable, Sendable {
    /// The certificate (a server's chain file: its CA is the root the tests trust, so the leaf is enough).
    public var certificateFile: String
    public var privateKeyFile: String
}

/// A throw-away PKI for TLS tests, made with the `openssl` command in a temporary directory (removed with the
/// value): a test CA and the certificates tests need from it, plus a second CA nobody trusts. Keys are P-256
/// (quick to make).
///
/// Every server certificate names `localhost`, `127.0.0.1` and `::1`, except `wrongHost`.
public final class TestCertificates: Sendable {
    public let directory: TemporaryDirectory
    /// The CA the tests trust (PEM certificate).
    public let caFile: String
    /// A server certificate from the CA, valid for 30 days.
    public let server: TestIdentity
    /// A server certificate from the CA whose validity ended yesterday.
    public let expiredServer: TestIdentity
    /// A server certificate from the CA for `wrong.example` only.
    public let wrongHost: TestIdentity
    /// A client certificate from the CA, subject `CN=device-42,O=CoinWatch Test` (RFC 2253 order).
    public let client: TestIdentity
    /// Another CA, which no test trusts.
    public let otherCAFile: String
    /// A `localhost` server certificate from the other CA.
    public let untrustedServer: TestIdentity
    /// A client certificate from the other CA.
    public let untrustedClient: TestIdentity

    /// One PKI for the whole test process, made on first use (a dozen `openssl` runs, on a thread of their own)
    /// and removed when the process exits. Tests that change files in it must make their own instead.
    public static func shared() async throws -> TestCertificates {
        try await onOwnThread {
            try sharedInstance.withLock { shared in
                if let shared { return shared }
                let made = try TestCertificates()
                shared = made
                // A static is never deinitialised; remove the files at exit instead.
                atexit { TestCertificates.sharedInstance.withLock { $0 }?.directory.remove() }
                return made
            }
        }
    }

    /// A PKI of its own, made on a thread of its own (see `onOwnThread`).
    public static func make() async throws -> TestCertificates {
        try await onOwnThread { try TestCertificates() }
    }

    private static let sharedInstance = Mutex<TestCertificates?>(nil)

    /// The RFC 2253 subject of `client`.
    public static let clientSubject = "CN=device-42,O=CoinWatch Test"

    public init() throws {
        directory = try TemporaryDirectory(prefix: "coinwatch-pki")
        let base = directory.path
        let ca = try Self.makeCA(named: "ca", subject: "/CN=CoinWatch Test CA", in: base)
        let other = try Self.makeCA(named: "other-ca", subject: "/CN=Untrusted Test CA", in: base)
        caFile = ca.certificateFile
        otherCAFile = other.certificateFile
        let localNames = "DNS:localhost,IP:127.0.0.1,IP:::1"
        server = try Self.issue(
            "server", subject: "/CN=localhost", names: localNames, usage: "serverAuth", days: 30, by: ca, in: base)
        expiredServer = try Self.issue(
            "expired", subject: "/CN=localhost", names: localNames, usage: "serverAuth", days: -1, by: ca, in: base)
        wrongHost = try Self.issue(
            "wrong-host", subject: "/CN=wrong.example", names: "DNS:wrong.example", usage: "serverAuth", days: 30,
            by: ca, in: base)
        client = try Self.issue(
            "client", subject: "/O=CoinWatch Test/CN=device-42", names: nil, usage: "clientAuth", days: 30, by: ca,
            in: base)
        untrustedServer = try Self.issue(
            "untrusted-server", subject: "/CN=localhost", names: localNames, usage: "serverAuth", days: 30, by: other,
            in: base)
        untrustedClient = try Self.issue(
            "untrusted-client", subject: "/CN=stranger", names: nil, usage: "clientAuth", days: 30, by: other, in: base)
    }

    /// A file in the PKI's directory (for tests that write their own, such as a broken certificate).
    public func path(_ name: String) -> String {
        directory.appending(name).path
    }

    /// Issues another certificate from the trusted CA (a renewed server certificate, say).
    public func issue(
        _ name: String, subject: String, names: String?, usage: String = "serverAuth", days: Int = 30
    ) throws -> TestIdentity {
        let ca = TestIdentity(certificateFile: caFile, privateKeyFile: directory.appending("ca.key").path)
        return try Self.issue(name, subject: subject, names: names, usage: usage, days: days, by: ca, in: directory.path)
    }

    /// A self-signed CA certificate (basicConstraints CA:TRUE, keyCertSign) and its key.
    private static func makeCA(named name: String, subject: String, in base: String) throws -> TestIdentity {
        let identity = TestIdentity(certificateFile: "\(base)/\(name).pem", privateKeyFile: "\(base)/\(name).key")
        try OpenSSLCommand.succeed([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", identity.privateKeyFile, "-out", identity.certificateFile, "-subj", subject, "-days", "30",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        return identity
    }

    /// A leaf certificate for `subject` with subjectAltName `names`, extended key usage `usage`, valid from now
    /// for `days` (a negative count makes one that has already expired), signed by `ca`.
    private static func issue(
        _ name: String, subject: String, names: String?, usage: String, days: Int, by ca: TestIdentity, in base: String
    ) throws -> TestIdentity {
        let identity = TestIdentity(certificateFile: "\(base)/\(name).pem", privateKeyFile: "\(base)/\(name).key")
        let request = "\(base)/\(name).csr"
        let extensions = "\(base)/\(name).ext"
        try OpenSSLCommand.succeed([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", identity.privateKeyFile, "-out", request, "-subj", subject,
        ])
        var lines = [
            "basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature", "extendedKeyUsage=\(usage)",
        ]
        if let names { lines.append("subjectAltName=\(names)") }
        try (lines.joined(separator: "\n") + "\n").write(toFile: extensions, atomically: true, encoding: .utf8)
        try OpenSSLCommand.succeed([
            "x509", "-req", "-in", request, "-CA", ca.certificateFile, "-CAkey", ca.privateKeyFile,
            "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", String(days), "-extfile", extensions,
            "-out", identity.certificateFile,
        ])
        return identity
    }
}
