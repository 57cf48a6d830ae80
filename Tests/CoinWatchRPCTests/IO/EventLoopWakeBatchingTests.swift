@testable import CoinWatchRPC
import CoinWatchTestSupport
import Glibc
import Testing

@Suite("EventLoop wake batching")
struct EventLoopWakeBatchingTests {
    /// Waits until `loop` is blocked in `epoll_wait`, so that only a wake lets it see new jobs.
    func untilAsleep(_ loop: EventLoop) async -> Bool {
        await eventually { loop.isAsleep }
    }

    @Test("jobs queued for a sleeping loop inside coalescingWakes run after it returns, with one wake")
    func heldUntilTheBodyReturns() async throws {
        let loop = try EventLoop(name: "test-coalesce")
        let ran = Shared(0)
        let before = await onLoop(loop) { loop.statistics.wakeups }
        #expect(await untilAsleep(loop))

        let ranInsideBody = EventLoop.coalescingWakes { () -> Int in
            for _ in 0..<100 {
                loop.execute { ran.update { $0 += 1 } }
            }
            // Time the loop would have had to run them, had it been woken.
            usleep(20_000)
            return ran.value
        }
        #expect(ranInsideBody == 0)
        #expect(await eventually { ran.value == 100 })
        #expect(await untilAsleep(loop))
        let after = await onLoop(loop) { loop.statistics.wakeups }
        // One wake for the hundred jobs, one for reading the counter.
        #expect(after - before == 2)
        await loop.shutdownGracefully()
    }

    @Test("a nested coalescingWakes leaves the wake to the outermost one; each loop owed a wake gets one")
    func nestedAndSeveralLoops() async throws {
        let first = try EventLoop(name: "test-coalesce-1")
        let second = try EventLoop(name: "test-coalesce-2")
        let ran = Shared(0)
        #expect(await untilAsleep(first))
        #expect(await untilAsleep(second))

        let ranAfterInner = EventLoop.coalescingWakes { () -> Int in
            EventLoop.coalescingWakes {
                first.execute { ran.update { $0 += 1 } }
            }
            second.execute { ran.update { $0 += 1 } }
            usleep(20_000)
            return ran.value
        }
        #expect(ranAfterInner == 0)
        #expect(await eventually { ran.value == 2 })
        await first.shutdownGracefully()
        await second.shutdownGracefully()
    }

    @Test("outside coalescingWakes a job for a sleeping loop wakes it at once")
    func wakesAtOnceOtherwise() async throws {
        let loop = try EventLoop(name: "test-no-coalesce")
        let ran = Shared(0)
        #expect(await untilAsleep(loop))
        loop.execute { ran.update { $0 += 1 } }
        #expect(await eventually { ran.value == 1 })
        await loop.shutdownGracefully()
    }
}
