import CoinWatchClient
import CoinWatchRPC
import CoinWatchTestSupport
import Testing

/// A call's deadline bounds the whole call, connecting included.
@Suite("CoinWatchClient call deadlines")
struct CallDeadlineTests {
    @Test("a server that never finishes the handshake fails the call at its deadline, not the connect timeout's")
    func deadlineCoversConnecting() async throws {
        let listener = try SilentListener()
        var configuration = CoinWatchClient.Configuration(host: "127.0.0.1", port: listener.port)
        // Far longer than the call's deadline: reaching it would fail the call UNAVAILABLE, not DEADLINE_EXCEEDED.
        configuration.connectTimeout = .seconds(600)
        let client = CoinWatchClient(configuration: configuration)
        let error = await #expect(throws: RPCError.self) {
            _ = try await client.health(timeout: .milliseconds(200))
        }
        #expect(error?.code == .deadlineExceeded)
        #expect(error?.message == "deadline of 200 ms exceeded while connecting")
    }
}
