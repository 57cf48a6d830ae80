import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `nats-server`s with JetStream run by a test: one (R1) or three clustered (R3) on loopback, each with its own
/// store directory, stopped when the test lets go of them.
///
/// Client ports are chosen by the server (`-p -1`) and read from its log; route ports must be known before the
/// servers start (every server of a JetStream cluster names its routes), so they are taken from the kernel by
/// binding port 0 and releasing it just before the start. A server that is killed and started again keeps its
/// ports and its store, so it rejoins as the same peer and catches up.
public final class NATSCluster: Sendable {
    /// One server of the cluster.
    public final class Server: Sendable {
        public let name: String
        public let storeDirectory: String
        public let logPath: String
        let clientPort: Mutex<Int>
        let routePort: Int
        let routes: [Int]
        let clusterName: String?
        /// Whether clients learn the other servers' addresses from this one (nats-server's default).
        let advertises: Bool
        /// More `nats-server` options (authorisation, TLS).
        let extraArguments: [String]
        private let pid = Mutex<pid_t?>(nil)

        init(name: String, storeDirectory: String, logPath: String, routePort: Int, routes: [Int], clusterName: String?,
             advertises: Bool, extraArguments: [String]) {
            self.name = name
            self.storeDirectory = storeDirectory
            self.logPath = logPath
            self.clientPort = Mutex(-1)
            self.routePort = routePort
            self.routes = routes
            self.clusterName = clusterName
            self.advertises = advertises
            self.extraArguments = extraArguments
        }

        deinit {
            kill()
        }

        /// `nats://127.0.0.1:PORT`.
        public var url: String { "nats://127.0.0.1:\(clientPort.withLock { $0 })" }

        public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

        public var isRunning: Bool { pid.withLock { $0 != nil } }

        /// Starts the server (again) and waits until it accepts clients.
        public func start() async throws {
            let port = clientPort.withLock { $0 }
            var arguments = ["-a", "127.0.0.1", "-p", "\(port)", "-js", "-sd", storeDirectory, "-n", name]
            if let clusterName {
                arguments += ["--cluster_name", clusterName, "--cluster", "nats://127.0.0.1:\(routePort)",
                              "--routes", routes.map { "nats://127.0.0.1:\($0)" }.joined(separator: ",")]
                if !advertises { arguments.append("--no_advertise") }
            }
            arguments += extraArguments
            // The log is appended to across restarts: the listening line looked for is the last one.
            let before = log.count
            let child = try ServerProcess.spawn(NATSCluster.binary, arguments, log: logPath)
            pid.withLock { $0 = child }
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let text = String(log.dropFirst(before))
                if let found = Self.clientPort(in: text) {
                    clientPort.withLock { $0 = found }
                    return
                }
                var status: Int32 = 0
                if waitpid(child, &status, WNOHANG) == child {
                    pid.withLock { $0 = nil }
                    throw ServerProcessError(message: "nats-server \(name) exited:\n\(text)")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            // The deadline may have passed while this task waited for a thread (a busy run): look once more.
            if let found = Self.clientPort(in: String(log.dropFirst(before))) {
                clientPort.withLock { $0 = found }
                return
            }
            kill()
            throw ServerProcessError(message: "nats-server \(name) did not listen within 60 s:\n\(log)")
        }

        /// SIGKILL and reap: a crash.
        public func kill() {
            pid.withLock { pid in
                guard let current = pid else { return }
                Glibc.kill(current, SIGKILL)
                var status: Int32 = 0
                waitpid(current, &status, 0)
                pid = nil
            }
        }

        static func clientPort(in log: String) -> Int? {
            guard let range = log.range(of: "Listening for client connections on ", options: .backwards) else {
                return nil
            }
            let rest = log[range.upperBound...].prefix { !$0.isWhitespace }
            guard let colon = rest.lastIndex(of: ":") else { return nil }
            return Int(rest[rest.index(after: colon)...])
        }
    }

    public let servers: [Server]
    public let directory: TemporaryDirectory

    /// Whether `nats-server` is installed (scripts/bootstrap installs it).
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    static let binary = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"]
        .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/sbin/nats-server"

    /// Starts `count` servers (1, or 3 for a JetStream cluster) and waits until they accept clients. With
    /// `advertise` false a client knows only the servers it is given, so losing them cuts it off from NATS (a
    /// partition) instead of moving it to another server of the cluster. `arguments` go to every server (for
    /// example `--user`/`--pass`, `--auth`, or `--tls` with `--tlscert`/`--tlskey`).
    public static func start(servers count: Int, advertise: Bool = true, arguments: [String] = []) async throws
        -> NATSCluster
    {
        let directory = try TemporaryDirectory(prefix: "nats-test")
        let routePorts = count > 1 ? try (0..<count).map { _ in try freeLoopbackPort() } : []
        var servers: [Server] = []
        for index in 0..<count {
            let name = "n\(index + 1)"
            servers.append(Server(
                name: name, storeDirectory: directory.path + "/\(name)", logPath: directory.path + "/\(name).log",
                routePort: count > 1 ? routePorts[index] : 0, routes: routePorts, clusterName: count > 1 ? "cw" : nil,
                advertises: advertise, extraArguments: arguments))
        }
        let cluster = NATSCluster(servers: servers, directory: directory)
        for server in servers { try await server.start() }
        return cluster
    }

    private init(servers: [Server], directory: TemporaryDirectory) {
        self.servers = servers
        self.directory = directory
    }

    deinit {
        stop()
    }

    /// Every server's URL, comma-separated, as `--cluster` takes them.
    public var urls: String { servers.map(\.url).joined(separator: ",") }

    public func stop() {
        for server in servers { server.kill() }
    }
}
