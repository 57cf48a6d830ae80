import CoinWatchTestSupport
import Dispatch
import Testing
@testable import CoinWatchService

/// The alert thread is woken once per batch of queued jobs, not once per job: no job may be left waiting.
@Suite(.timeLimit(.minutes(2)))
struct AlertWorkerWakeTests {
    @Test func ticksPublishedFromManyThreadsAtOnceAreAllEvaluated() async throws {
        try await withAlertService { harness in
            let threads = 4
            let perThread = 500
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for step in 1...perThread {
                    harness.publish("T\(thread)", "\(1000 + step)")
                }
            }
            #expect(await eventually { harness.stats.ticksEvaluated == threads * perThread })
        }
    }

    @Test func jobsQueuedWhilePausedAreEvaluatedOnResume() async throws {
        try await withAlertService { harness in
            harness.publish("BTC", "100")
            #expect(await eventually { harness.stats.ticksEvaluated == 1 })
            let worker = harness.service.alerts.worker
            worker.pause()
            for step in 1...10 {
                harness.publish("BTC", "\(100 + step)")
            }
            #expect(await eventually { worker.queuedJobs == 10 })
            #expect(harness.stats.ticksEvaluated == 1)
            worker.resume()
            #expect(await eventually { harness.stats.ticksEvaluated == 11 })
            // And the thread still wakes for work queued after the resume.
            harness.publish("BTC", "200")
            #expect(await eventually { harness.stats.ticksEvaluated == 12 })
        }
    }
}
