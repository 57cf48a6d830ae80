import CoinWatchClient
import CoinWatchTestSupport

extension CoinWatchClient {
    /// A client of the coinwatchd a test started on `port`, with `Configuration.ofDaemon`'s deadlines.
    static func ofDaemon(port: Int) -> CoinWatchClient {
        CoinWatchClient(configuration: .ofDaemon(port: port))
    }
}

extension CoinWatchClient.Configuration {
    /// A client configuration for the coinwatchd a test started on `port`.
    ///
    /// Its deadlines are generous, as `eventually`'s are: a call's deadline covers connecting, and at the start of a
    /// full run, when every suite starts its servers at once on two cores, a clean-clone run once saw the first call
    /// to four just-started servers spend more than the library's default 10 s connecting. A test here checks what
    /// happens, never how fast.
    static func ofDaemon(port: Int) -> Self {
        Self(host: "127.0.0.1", port: port).withTestDeadlines()
    }

    /// `ofDaemon(port:)` for the nodes of a cluster, `HOST:PORT,HOST:PORT,…`.
    static func ofDaemons(_ addresses: String) throws -> Self {
        try Self(address: addresses).withTestDeadlines()
    }

    private func withTestDeadlines() -> Self {
        var configuration = self
        configuration.connectTimeout = .seconds(60)
        configuration.defaultTimeout = .seconds(60)
        return configuration
    }
}
