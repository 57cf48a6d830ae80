@testable import CoinWatchService
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Dispatch
import Synchronization
import Testing

@Suite("SettingsWriteQueue")
struct SettingsWriteQueueTests {
    @Test("close() gives the wake an event loop owes the writer when that loop's round does not end")
    func closeGivesTheOwedWake() async throws {
        let queue = SettingsWriteQueue(limit: 10)
        let loop = try EventLoop(name: "test-owed-wake")
        let taken = Mutex(0)
        let writerExited = DispatchSemaphore(value: 0)
        NamedThread.start(name: "test-writer") {
            var buffer: [PendingWrite] = []
            while queue.next(into: &buffer) == .process {
                taken.withLock { $0 += buffer.count }
                buffer = []
            }
            writerExited.signal()
        }
        #expect(await eventually { queue.isWriterAsleep })
        let command = try DeleteCommand(validating: V1.DeleteSettingsRequest(deviceID: "phone-1"))
        let queued = DispatchSemaphore(value: 0)
        let endRound = DispatchSemaphore(value: 0)
        loop.execute {
            // The first write of the round claims the sleeping writer's wake for the round's end, which waits here.
            #expect(queue.enqueue(.delete(command, completion: { _ in }), from: loop) == nil)
            queued.signal()
            endRound.wait()
        }
        #expect(queued.wait(timeout: .now() + 60) == .success)
        queue.close()
        // The writer takes the write and exits while the loop is still inside its round.
        #expect(writerExited.wait(timeout: .now() + 60) == .success)
        #expect(taken.withLock { $0 } == 1)
        endRound.signal()
        await loop.shutdownGracefully()
    }
}
