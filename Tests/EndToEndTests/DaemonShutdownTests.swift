import CoinWatchClient
import CoinWatchModel
import CoinWatchTestSupport
import Testing

/// What coinwatchd reports when it stops, for whoever reads its log after a run.
@Suite("coinwatchd shutdown")
struct DaemonShutdownTests {
    @Test("on SIGTERM the last log line counts the committed writes and the syncs that carried them")
    func stoppedLineCountsWrites() async throws {
        let server = try await ServerProcess.start()
        let client = CoinWatchClient.ofDaemon(port: server.port)
        for device in ["phone-1", "phone-2", "phone-3"] {
            _ = try await client.setRule(device: device, symbol: "BTC", below: ExactDecimal(1000), above: nil)
        }
        client.close()
        await server.stop()

        let stopped = try #require(server.log.split(separator: "\n").last { $0.contains("stopped") })
        #expect(stopped.contains("writes=3"), "\(stopped)")
        // Sequential saves each need their own sync: nothing was queued behind them.
        #expect(stopped.contains("syncs=3"), "\(stopped)")
        #expect(stopped.contains("writes_per_sync=1.0"), "\(stopped)")
    }
}
