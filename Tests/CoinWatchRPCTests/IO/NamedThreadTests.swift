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
        let done = Atomic<Bool>(false)
    }

    static func niceValue(of priority: NamedThread.Priority) async -> Int32? {
        let seen = Seen()
        NamedThread.start(name: "cw-test-nice", priority: priority) {
            seen.nice.withLock { $0 = NamedThread.currentNiceValue }
            seen.done.store(true, ordering: .releasing)
        }
        _ = await eventually(timeout: .seconds(60)) { seen.done.load(ordering: .acquiring) }
        return seen.nice.withLock { $0 }
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
}
