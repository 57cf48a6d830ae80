import CoinWatchCore
import CoinWatchCommandLine
import CoinWatchRPC
import CoinWatchTLS

/// coinwatchd's listeners and their TLS (docs/SECURITY.md): `--listen` may be repeated, `--tls-cert` and
/// `--tls-key` put TLS on them.
struct ListenOptions {
    static let all: [OptionSpec] = [
        OptionSpec("listen", .value(placeholder: "HOST:PORT"), environment: "COINWATCH_LISTEN",
                   default: "127.0.0.1:7878",
                   help: "Address to serve on (port 0 picks a free port); repeat it, or separate addresses with commas, "
                       + "to listen on several. With --tls-cert every listener speaks TLS only, except one written "
                       + "tcp://HOST:PORT (plaintext only, say for a loopback address); tls://HOST:PORT always asks for "
                       + "TLS and needs --tls-cert."),
        OptionSpec("tls-cert", .value(placeholder: "FILE"), environment: "COINWATCH_TLS_CERT",
                   help: "PEM certificate chain the TLS listeners present (reloaded with the key on SIGHUP)."),
        OptionSpec("tls-key", .value(placeholder: "FILE"), environment: "COINWATCH_TLS_KEY",
                   help: "PEM private key of --tls-cert (unencrypted)."),
        OptionSpec("tls-client-ca", .value(placeholder: "FILE"), environment: "COINWATCH_TLS_CLIENT_CA",
                   help: "PEM CA certificates for mutual TLS: clients must present a certificate they issued."),
        OptionSpec("tls-client-auth", .value(placeholder: "required|optional"), environment: "COINWATCH_TLS_CLIENT_AUTH",
                   default: "required",
                   help: "With --tls-client-ca: whether a client without a certificate is refused (required) or let in "
                       + "(optional; one with a certificate that does not verify is refused either way)."),
        OptionSpec("tls-min-version", .value(placeholder: "1.2|1.3"), environment: "COINWATCH_TLS_MIN_VERSION",
                   default: "1.2", help: "Lowest TLS version accepted."),
    ]

    /// The ALPN names a TLS listener accepts, in its order of preference: HTTP/2 (gRPC, Connect), HTTP/1.1
    /// (Connect, the dashboard, metrics) and the native protocol. Without ALPN the first decrypted bytes decide.
    static let applicationProtocols = ["h2", "http/1.1", RPCProtocol.applicationProtocol]

    /// One `--listen` address.
    struct Address: Hashable {
        enum Security: Hashable {
            /// Plaintext without `--tls-cert`, TLS only with it.
            case byDefault
            /// `tls://`: TLS only (needs `--tls-cert`).
            case tls
            /// `tcp://`: plaintext only.
            case plaintext
        }

        var host: String
        var port: Int
        var security: Security

        /// Parses `[tls://|tcp://]HOST:PORT` (`[::1]:7878` for IPv6 literals).
        init(parsing text: String) throws(UsageError) {
            var rest = Substring(text)
            security = .byDefault
            if rest.hasPrefix("tls://") {
                security = .tls
                rest = rest.dropFirst(6)
            } else if rest.hasPrefix("tcp://") {
                security = .plaintext
                rest = rest.dropFirst(6)
            }
            do {
                let address = try HostAndPort(parsing: rest, portZeroAllowed: true)
                host = address.host
                port = address.port
            } catch {
                throw UsageError("--listen: \(error.message) (HOST:PORT, tls://HOST:PORT or tcp://HOST:PORT)")
            }
        }

        /// Whether this listener speaks TLS, given whether a certificate was configured.
        func usesTLS(certificateGiven: Bool) -> Bool {
            switch security {
            case .byDefault: certificateGiven
            case .tls: true
            case .plaintext: false
            }
        }

        /// `host:port` as an operator writes it.
        var hostAndPort: String { HostAndPort(host: host, port: port).description }
    }

    var addresses: [Address]
    /// The TLS listeners' configuration; nil when no listener speaks TLS.
    var tls: TLSConfiguration?

    init(_ parsed: ParsedArguments) throws(UsageError) {
        var addresses = [Address]()
        for value in parsed.all("listen") {
            for piece in value.split(separator: ",", omittingEmptySubsequences: true) {
                addresses.append(try Address(parsing: String(piece)))
            }
        }
        guard !addresses.isEmpty else { throw UsageError("--listen: no address given") }
        self.addresses = addresses
        let certificate = parsed["tls-cert"].flatMap { $0.isEmpty ? nil : $0 }
        let key = parsed["tls-key"].flatMap { $0.isEmpty ? nil : $0 }
        let clientCA = parsed["tls-client-ca"].flatMap { $0.isEmpty ? nil : $0 }
        guard (certificate == nil) == (key == nil) else {
            throw UsageError("--tls-cert and --tls-key go together: give both or neither")
        }
        if let address = addresses.first(where: { $0.security == .tls }), certificate == nil {
            throw UsageError("--listen \(address.hostAndPort) asks for TLS (tls://): give --tls-cert FILE and --tls-key FILE")
        }
        guard let certificate, let key else {
            if clientCA != nil { throw UsageError("--tls-client-ca needs --tls-cert and --tls-key") }
            tls = nil
            return
        }
        var configuration = TLSConfiguration.server(
            certificateChainFile: certificate, privateKeyFile: key, applicationProtocols: Self.applicationProtocols)
        switch parsed["tls-min-version"] ?? "1.2" {
        case "1.2": configuration.minimumVersion = .tls12
        case "1.3": configuration.minimumVersion = .tls13
        case let other: throw UsageError("--tls-min-version: '\(other)' is not 1.2 or 1.3")
        }
        if let clientCA {
            configuration.caFile = clientCA
            switch parsed["tls-client-auth"] ?? "required" {
            case "required": configuration.clientCertificates = .required
            case "optional": configuration.clientCertificates = .optional
            case let other: throw UsageError("--tls-client-auth: '\(other)' is not required or optional")
            }
        }
        tls = addresses.contains { $0.usesTLS(certificateGiven: true) } ? configuration : nil
    }

    /// The server's listeners: the first as `host`/`port`/`tls`, the others as `additionalListeners`, TLS ones
    /// taking their sessions from `context`.
    func apply(to rpc: inout RPCServer.Configuration, context: ReloadableTLSContext?) {
        let listeners = addresses.map { address in
            RPCServer.Listener(
                host: address.host, port: address.port,
                tls: context.flatMap { address.usesTLS(certificateGiven: true) ? TLSServerTransforms(context: $0) : nil })
        }
        rpc.host = listeners[0].host
        rpc.port = listeners[0].port
        rpc.tls = listeners[0].tls
        rpc.additionalListeners = Array(listeners.dropFirst())
    }
}
