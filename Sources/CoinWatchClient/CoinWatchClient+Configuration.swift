import CoinWatchCore
import CoinWatchModel
public import CoinWatchRPC
public import CoinWatchTLS

extension CoinWatchClient {
    /// Where the server is and how to talk to it.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// Sent in the handshake; required by servers with a publish token for `publish`.
        public var token = ""
        public var clientName = "coinwatch-client/\(CoinWatchVersion.current)"
        public var connectTimeout: Duration = .seconds(5)
        /// Deadline for unary calls that do not pass their own; nil = none.
        public var defaultTimeout: Duration? = .seconds(10)
        public var keepaliveInterval: Duration = .seconds(30)
        public var keepaliveTimeout: Duration = .seconds(10)
        /// TLS to the server; nil: plaintext. `TLSConfiguration.client(caFile:)` verifies the server against the
        /// system's CAs plus `caFile`; set `certificateChainFile` and `privateKeyFile` for mutual TLS. The native
        /// ALPN name is offered when the configuration offers none.
        public var tls: TLSConfiguration?
        /// The name the server's certificate must carry (and SNI); nil: `host`.
        public var tlsServerName: String?

        /// More servers of the same cluster (`HOST:PORT` each): when the connection must be made (first call, or the
        /// server went away) and `host:port` does not answer, they are tried in order, and the one that answered
        /// is tried first next time. Empty for a single server.
        public var otherServers: [String] = []

        public init(host: String = "127.0.0.1", port: Int = 7878) {
            self.host = host
            self.port = port
        }

        /// Parses `HOST:PORT` (`[::1]:7878` for IPv6 literals), or several separated by commas: the nodes of a
        /// cluster, the first tried first (`otherServers`).
        public init(address: String) throws(RPCError) {
            let addresses = address.split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0.filter { !$0.isWhitespace }) }
            if addresses.count > 1 {
                for other in addresses.dropFirst() { _ = try Self(address: other) }
                try self.init(address: addresses[0])
                otherServers = Array(addresses.dropFirst())
                return
            }
            let parsed: HostAndPort
            do {
                parsed = try HostAndPort(parsing: address)
            } catch {
                throw RPCError(code: .invalidArgument, message: error.message)
            }
            self.init(host: parsed.host, port: parsed.port)
        }

        /// `host:port` as given.
        public var address: String { HostAndPort(host: host, port: port).description }

        /// Every server's address, in the order of `servers`.
        var serverAddresses: [String] {
            [address] + otherServers.compactMap { other in (try? Self(address: other))?.address }
        }

        /// Every server to try, `host:port` first, as (host, port).
        var servers: [(host: String, port: Int)] {
            [(host, port)] + otherServers.compactMap { other in
                (try? Self(address: other)).map { ($0.host, $0.port) }
            }
        }
    }
}
