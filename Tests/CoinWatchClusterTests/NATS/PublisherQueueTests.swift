import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing
@testable import CoinWatchCluster

/// The hand-over between producers and a cluster publisher thread: order, the bound, and every way a sleeping
/// consumer is woken (an item, `wake`, `stop`), and the ways a pause ends.
@Suite struct PublisherQueueTests {
    @Test("items come out in order; past the limit the oldest are dropped and counted")
    func orderAndBound() {
        let queue = PublisherQueue<Int>(limit: 5)
        #expect(queue.append(contentsOf: 1...3) == 0)
        #expect(queue.append(contentsOf: 4...8) == 3)
        var batch: [Int] = []
        #expect(queue.take(into: &batch))
        #expect(batch == [4, 5, 6, 7, 8])
    }

    @Test("a consumer asleep for items wakes for the next one, for wake(), and for stop(), which drains first")
    func wakesTheSleeper() async throws {
        let queue = PublisherQueue<Int>(limit: 100)
        let seen = Mutex<[Int]>([])
        let wakes = Atomic<Int>(0)
        let consumer = Task.detached {
            try await onOwnThread {
                var batch: [Int] = []
                while true {
                    if queue.take(into: &batch) {
                        seen.withLock { $0 += batch }
                        batch.removeAll(keepingCapacity: true)
                    } else if queue.isStopping {
                        return
                    } else {
                        wakes.add(1, ordering: .relaxed)
                    }
                }
            }
        }
        queue.append(contentsOf: [1])
        #expect(await eventually { seen.withLock { $0 } == [1] })
        // Asleep again with nothing queued: wake() brings it round once more without an item.
        let before = wakes.load(ordering: .relaxed)
        #expect(await eventually {
            queue.wake()
            return wakes.load(ordering: .relaxed) > before
        })
        queue.append(contentsOf: [2, 3])
        #expect(await eventually { seen.withLock { $0 } == [1, 2, 3] })
        queue.stop()
        try await consumer.value
        // Nothing is taken once stopping.
        #expect(queue.append(contentsOf: [4]) == 0)
        var batch: [Int] = []
        #expect(!queue.take(into: &batch) && batch.isEmpty)
    }

    @Test("a pause ends with wake(), stop() or its timeout, and items queued meanwhile wait for the consumer")
    func pause() async throws {
        let queue = PublisherQueue<Int>(limit: 100)
        // The pauser takes each pause only when the test lets it (`gate`), so a wake meant for one pause cannot
        // end the next.
        let gate = Atomic<Int>(0)
        let paused = Atomic<Int>(0)
        let ended = Atomic<Int>(0)
        let pauser = Task.detached {
            try await onOwnThread {
                for (stage, timeout) in [Duration.seconds(600), .milliseconds(10), .seconds(600)].enumerated() {
                    while gate.load(ordering: .relaxed) < stage { usleep(1_000) }
                    paused.add(1, ordering: .relaxed)
                    queue.pause(timeout: timeout)
                    ended.add(1, ordering: .relaxed)
                }
            }
        }
        // The first pause ends with wake(); items queued meanwhile stay queued.
        #expect(await eventually { paused.load(ordering: .relaxed) == 1 })
        queue.append(contentsOf: [1, 2])
        #expect(await eventually {
            queue.wake()
            return ended.load(ordering: .relaxed) == 1
        })
        // The second with its timeout, untouched.
        gate.store(1, ordering: .relaxed)
        #expect(await eventually { ended.load(ordering: .relaxed) == 2 })
        // The third with stop().
        gate.store(2, ordering: .relaxed)
        #expect(await eventually { paused.load(ordering: .relaxed) == 3 })
        queue.stop()
        try await pauser.value
        #expect(ended.load(ordering: .relaxed) == 3)
        var batch: [Int] = []
        #expect(queue.take(into: &batch) && batch == [1, 2], "what was queued during the pause is still there")
    }
}
