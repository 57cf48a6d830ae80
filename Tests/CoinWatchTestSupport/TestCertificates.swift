import Foundation

/// Keys and certificates for tests, made with the `openssl` command (an implementation independent of the code
/// under test): a test CA and a server certificate it signed for 127.0.0.1 and localhost, and ES256 provider keys
/// in Apple's `.p8` form.
public enum TestCertificates {
    /// Writes `ca.pem`/`ca.key` (a CA valid for a day) and `server.pem`/`server.key` (signed by it, for
    /// `IP:127.0.0.1` and `DNS:localhost`) into `directory`.
    public static func makeServerCertificate(in directory: TemporaryDirectory) throws {
        let path = directory.path
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", "\(path)/ca.key", "-out", "\(path)/ca.pem", "-days", "1", "-subj", "/CN=CoinWatch test CA"])
        try openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", "\(path)/server.key", "-out", "\(path)/server.csr", "-subj", "/CN=localhost"])
        try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(to: directory.appending("server.ext"))
        try openssl(["x509", "-req", "-in", "\(path)/server.csr", "-CA", "\(path)/ca.pem", "-CAkey", "\(path)/ca.key",
                     "-CAcreateserial", "-out", "\(path)/server.pem", "-days", "1", "-extfile", "\(path)/server.ext"])
    }

    /// Writes `<name>.p8` (an unencrypted PKCS#8 P-256 key, as Apple hands them out) and `<name>.pub.pem` (its
    /// public half) into `directory`.
    public static func makeProviderKey(named name: String, in directory: TemporaryDirectory) throws {
        let path = directory.path
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(path)/\(name).p8"])
        try openssl(["pkey", "-in", "\(path)/\(name).p8", "-pubout", "-out", "\(path)/\(name).pub.pem"])
    }

    static func openssl(_ arguments: [String]) throws {
        try OpenSSLCommand.succeed(arguments)
    }
}
