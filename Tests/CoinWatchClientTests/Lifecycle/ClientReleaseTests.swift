import CoinWatchClient
import CoinWatchRPC
import CoinWatchTestSupport
import Synchronization
import Testing

/// A client may be let go on any thread, its own event loop included.
@Suite("CoinWatchClient let go")
struct ClientReleaseTests {
    @Test("a client whose last reference goes on its own loop stops that loop instead of waiting for it")
    func lastReleaseOnItsOwnLoop() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let holder = Mutex<CoinWatchClient?>(CoinWatchClient(configuration: try .init(address: server.address)))
        let loop = try await #require(holder.withLock { $0 }).connect().eventLoop
        let released = Atomic<Bool>(false)
        #expect(loop.execute {
            holder.withLock { $0 = nil }
            released.store(true, ordering: .releasing)
        })
        #expect(await eventually { released.load(ordering: .acquiring) })
        // A loop that ended takes no more jobs; nothing but the client's deinit stops this one.
        #expect(await eventually { !loop.execute {} })
    }
}
