import CoinWatchTestSupport
import Synchronization
import Testing
@testable import CoinWatchRPC

/// Named threads, and the background priority the push provider's thread runs at.
@Suite("named threads")
struct NamedThreadTests {
    /// What a started thread saw of itself.
    final class Seen: Sendable {
        let nice = Mutex<Int32?>(nil)
        let batch = Mutex<Bool?>(nil)
        let done = Atomic<Bool>(false)
    }

    static func seen(by priority: NamedThread.Priority) async -> Seen {
        let seen = Seen()
        NamedThread.start(name: "cw-test-nice", priority: priority) {
            seen.nice.withLock { $0 = NamedThread.currentNiceValue }
            seen.batch.withLock { $0 = NamedThread.currentIsBatchScheduled }
            seen.done.store(true, ordering: .releasing)
        }
        _ = await eventually(timeout: .seconds(60)) { seen.done.load(ordering: .acquiring) }
        return seen
    }

    static func niceValue(of priority: NamedThread.Priority) async -> Int32? {
        await seen(by: priority).nice.withLock { $0 }
    }

    @Test("a background thread runs behind the others; a normal one at the starter's priority")
    func backgroundIsNicer() async throws {
        let starter = try #require(NamedThread.currentNiceValue)
        let normal = await Self.niceValue(of: .normal)
        let background = await Self.niceValue(of: .background)
        #expect(normal == starter)
        // Nice values stop at 19.
        #expect(background == min(starter + NamedThread.backgroundNiceIncrement, 19))
    }

    @Test("a batch thread is batch-scheduled at the starter's nice value; the others keep the starter's policy")
    func batchIsBatchScheduled() async throws {
        let starter = try #require(NamedThread.currentNiceValue)
        let batch = await Self.seen(by: .batch)
        #expect(batch.batch.withLock { $0 } == true)
        #expect(batch.nice.withLock { $0 } == starter)
        #expect(await Self.seen(by: .normal).batch.withLock { $0 } == false)
        #expect(await Self.seen(by: .background).batch.withLock { $0 } == false)
    }
}
