extension TestCertificates {
    /// Writes `<name>.p8` (an unencrypted PKCS#8 P-256 key, as Apple hands out APNs keys) and `<name>.pub.pem` (its
    /// public half) into `directory`, with the `openssl` command on a thread of its own (see `onOwnThread`).
    public static func makeProviderKey(named name: String, in directory: TemporaryDirectory) async throws {
        let path = directory.path
        try await onOwnThread {
            try OpenSSLCommand.succeed(
                ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(path)/\(name).p8"])
            try OpenSSLCommand.succeed(["pkey", "-in", "\(path)/\(name).p8", "-pubout", "-out", "\(path)/\(name).pub.pem"])
        }
    }
}
