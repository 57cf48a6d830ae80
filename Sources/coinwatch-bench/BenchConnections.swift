import CoinWatchRPC

#if canImport(Glibc)
import Glibc
#endif

extension BenchOptions {
    /// Opens `count` connections to the server and completes their handshakes, spread over `group`'s loops, with at
    /// most 200 handshakes in flight so a large fleet does not trip the server's handshake timeout. Keepalive is
    /// off: the load itself shows whether the server is alive, and pings would be load the peers do not send.
    func connectAll(_ count: Int, on group: EventLoopGroup, clientName: String) throws -> [RPCClientConnection] {
        let host = self.host
        let port = self.port
        let token = self.token
        return try runBlocking {
            try await withThrowingTaskGroup(of: RPCClientConnection.self) { tasks in
                var all: [RPCClientConnection] = []
                var started = 0
                while started < count || !tasks.isEmpty {
                    while started < count && started - all.count < 200 {
                        started += 1
                        tasks.addTask {
                            var connectOptions = RPCClientConnection.Options()
                            connectOptions.clientName = clientName
                            connectOptions.authToken = token
                            connectOptions.keepaliveInterval = .zero
                            return try await RPCClientConnection.connect(
                                host: host, port: port, on: group.next(), options: connectOptions)
                        }
                    }
                    if let connection = try await tasks.next() { all.append(connection) }
                }
                return all
            }
        }
    }
}

extension BenchOptions {
    /// Opens `count` plain TCP connections (not started), spread over `group`'s loops, at most 200 connecting at
    /// once: for load that speaks another protocol than the native one (Connect over HTTP/1.1).
    func connectRaw(_ count: Int, on group: EventLoopGroup) throws -> [Connection] {
        let host = self.host
        let port = self.port
        return try runBlocking {
            try await withThrowingTaskGroup(of: Connection.self) { tasks in
                var all: [Connection] = []
                var started = 0
                while started < count || !tasks.isEmpty {
                    while started < count && started - all.count < 200 {
                        started += 1
                        tasks.addTask { try await Connection.connect(host: host, port: port, on: group.next()) }
                    }
                    if let connection = try await tasks.next() { all.append(connection) }
                }
                return all
            }
        }
    }
}

/// Raises this process's open-file limit to its hard maximum, for fleets of thousands of connections.
func raiseDescriptorLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}
