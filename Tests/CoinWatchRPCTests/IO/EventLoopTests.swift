import CoinWatchModel
@testable import CoinWatchRPC
import Glibc
import Testing

@Suite("EventLoop")
struct EventLoopTests {
    @Test("jobs from several threads run on the loop, in order per submitter")
    func executeFromManyThreads() async throws {
        let loop = try EventLoop(name: "test-exec")
        let submitters = 4
        let perSubmitter = 5000
        let seen = Shared([[Int]](repeating: [], count: submitters))
        let offLoop = Shared(0)
        await withTaskGroup(of: Void.self) { group in
            for submitter in 0..<submitters {
                group.addTask {
                    for sequence in 0..<perSubmitter {
                        loop.execute {
                            if !loop.inEventLoop { offLoop.update { $0 += 1 } }
                            seen.update { $0[submitter].append(sequence) }
                        }
                    }
                }
            }
        }
        #expect(await eventually { seen.value.allSatisfy { $0.count == perSubmitter } })
        #expect(seen.value.allSatisfy { $0 == Array(0..<perSubmitter) })
        #expect(offLoop.value == 0)
        #expect(!loop.inEventLoop)
        await loop.shutdownGracefully()
    }

    @Test("a sleeping loop is woken once per burst, not once per job")
    func wakeupsAreBatched() async throws {
        let loop = try EventLoop(name: "test-wake")
        let count = Shared(0)
        // The job itself submits the burst from the loop thread: the loop is awake, so no wake-up.
        loop.execute {
            for _ in 0..<1000 {
                loop.execute { count.update { $0 += 1 } }
            }
        }
        #expect(await eventually { count.value == 1000 })
        let stats = await onLoop(loop) { loop.statistics }
        #expect(stats.wakeups <= 3)
        await loop.shutdownGracefully()
    }

    /// On the queue itself, with explicit deadlines: a loop reads the clock for each timer it schedules, so on a
    /// busy machine a pause between two `scheduleTimer` calls would move the later deadlines and the order with them.
    @Test("timers fire in deadline order, ties in scheduling order")
    func timersFireInOrder() {
        var queue = TimerQueue()
        let fired = Shared([Int]())
        let deadlines: [Int64] = [40, 10, 30, 10, 0, 20, 10]
        for (index, deadline) in deadlines.enumerated() {
            _ = queue.schedule(deadline: deadline) { fired.update { $0.append(index) } }
        }
        // Nothing is due before its deadline.
        #expect(queue.popExpired(now: -1, sequenceLimit: .max) == nil)
        while let body = queue.popExpired(now: 40, sequenceLimit: .max) { body() }
        #expect(fired.value == [4, 1, 3, 6, 5, 2, 0])
        #expect(queue.count == 0)
    }

    @Test("timers scheduled on a loop all fire, each once")
    func timersFireOnTheLoop() async throws {
        let loop = try EventLoop(name: "test-timer")
        let fired = Shared([Int]())
        let delays: [Int] = [40, 10, 30, 10, 0, 20, 10]
        loop.execute {
            for (index, delay) in delays.enumerated() {
                loop.scheduleTimer(after: .milliseconds(delay)) {
                    fired.update { $0.append(index) }
                }
            }
        }
        #expect(await eventually { fired.value.count == delays.count })
        #expect(fired.value.sorted() == Array(delays.indices))
        #expect(await onLoop(loop) { loop.pendingTimerCount } == 0)
        await loop.shutdownGracefully()
    }

    @Test("cancelled timers do not fire; cancelling twice or after firing returns false")
    func cancel() async throws {
        let loop = try EventLoop(name: "test-cancel")
        let fired = Shared([Int]())
        let results = Shared([Bool]())
        loop.execute {
            var handles: [TimerHandle] = []
            for index in 0..<100 {
                handles.append(loop.scheduleTimer(after: .milliseconds(5 + index % 7)) {
                    fired.update { $0.append(index) }
                })
            }
            for index in stride(from: 0, to: 100, by: 2) {
                results.update { $0.append(loop.cancelTimer(handles[index])) }
            }
            results.update { $0.append(loop.cancelTimer(handles[0])) }
            let last = handles[99]
            // Once everything fired, cancelling a fired timer is a no-op.
            loop.scheduleTimer(after: .milliseconds(50)) {
                results.update { $0.append(loop.cancelTimer(last)) }
            }
        }
        #expect(await eventually { results.value.count == 52 })
        #expect(results.value[..<50].allSatisfy { $0 })
        #expect(results.value[50] == false)
        #expect(results.value[51] == false)
        #expect(Set(fired.value) == Set(stride(from: 1, to: 100, by: 2)))
        #expect(fired.value.count == 50)
        #expect(await onLoop(loop) { loop.pendingTimerCount } == 0)
        await loop.shutdownGracefully()
    }

    @Test("many timers, half cancelled: the rest fire, equal delays in scheduling order, and the heap empties")
    func manyTimers() async throws {
        let loop = try EventLoop(name: "test-many")
        let total = 50_000
        let fired = Shared([Int]())
        loop.execute {
            var generator = SplitMix64(seed: 42)
            var handles: [TimerHandle] = []
            handles.reserveCapacity(total)
            for index in 0..<total {
                let delay = Int(generator.next() % 40)
                handles.append(loop.scheduleTimer(after: .milliseconds(delay)) {
                    fired.update { $0.append(delay * 1_000_000 + index) }
                })
            }
            for index in stride(from: 0, to: total, by: 2) {
                loop.cancelTimer(handles[index])
            }
        }
        #expect(await eventually { fired.value.count == total / 2 })
        // Deadlines are "now + delay" with "now" advancing while scheduling, so among timers with
        // the same delay, deadlines (and so firing order) follow scheduling order.
        var lastIndexByDelay: [Int: Int] = [:]
        var inOrder = true
        for value in fired.value {
            let (delay, index) = (value / 1_000_000, value % 1_000_000)
            if let last = lastIndexByDelay[delay], last > index { inOrder = false }
            lastIndexByDelay[delay] = index
        }
        #expect(inOrder)
        #expect(fired.value.allSatisfy { ($0 % 1_000_000) % 2 == 1 })
        #expect(await onLoop(loop) { loop.pendingTimerCount } == 0)
        await loop.shutdownGracefully()
    }

    @Test("a timer that reschedules itself with zero delay does not starve other work")
    func zeroDelayRescheduling() async throws {
        let loop = try EventLoop(name: "test-zero")
        let ticks = Shared(0)
        let job = Shared(false)
        @Sendable func tick() {
            let count = ticks.update { value -> Int in
                value += 1
                return value
            }
            if count < 10_000 { loop.scheduleTimer(after: .zero) { tick() } }
        }
        loop.execute { tick() }
        loop.execute { job.update { $0 = true } }
        #expect(await eventually { job.value })
        #expect(await eventually { ticks.value == 10_000 })
        await loop.shutdownGracefully()
    }

    @Test("a registered descriptor's handler is called until deregistered")
    func registration() async throws {
        let loop = try EventLoop(name: "test-reg")
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        #expect(fcntl(readEnd, F_SETFL, O_NONBLOCK) == 0)
        let received = Shared([UInt8]())
        let registration = await onLoop(loop) {
            try! loop.register(readEnd, interest: .read, handler: PipeReader(fd: readEnd, received: received))
        }
        var byte: UInt8 = 7
        #expect(write(writeEnd, &byte, 1) == 1)
        #expect(await eventually { received.value == [7] })
        await onLoop(loop) { loop.deregister(registration) }
        // A stale handle is harmless.
        await onLoop(loop) { loop.deregister(registration) }
        byte = 8
        #expect(write(writeEnd, &byte, 1) == 1)
        // Round trips through the loop: had the handler still been registered, it would have run.
        for _ in 0..<10 { _ = await onLoop(loop) { 0 } }
        #expect(received.value == [7])
        #expect(await onLoop(loop) { loop.registrationCount } == 0)
        close(readEnd)
        close(writeEnd)
        await loop.shutdownGracefully()
    }

    @Test("stop drops nothing accepted, refuses later jobs, and join returns")
    func stopAndJoin() async throws {
        let loop = try EventLoop(name: "test-stop")
        let ran = Shared(0)
        for _ in 0..<100 {
            loop.execute { ran.update { $0 += 1 } }
        }
        loop.stop()
        loop.stop()
        await loop.shutdownGracefully()
        #expect(ran.value == 100)
        #expect(loop.execute { ran.update { $0 += 1 } } == false)
        // Joining an already finished loop returns at once, from any number of callers.
        loop.join()
        await loop.shutdownGracefully()
        #expect(ran.value == 100)
    }

    /// A loop closes its eventfd when it is freed, not when its thread ends (other threads may still wake it), so a
    /// loop that stayed referenced after stopping would keep it open.
    @Test("a stopped loop is freed once released, and a late execute on it is refused")
    func stoppedLoopIsFreed() async throws {
        weak var released: EventLoop?
        do {
            let loop = try EventLoop(name: "test-freed")
            released = loop
            #expect(loop.execute {})
            await loop.shutdownGracefully()
            #expect(!loop.execute {})
        }
        #expect(await eventually { released == nil })
    }

    @Test("a group hands out its loops round-robin")
    func groupRoundRobin() async throws {
        let group = try EventLoopGroup(threads: 3, namePrefix: "test-group")
        let picks = (0..<6).map { _ in group.next() }
        #expect(picks[0] === group.loops[0] && picks[1] === group.loops[1] && picks[2] === group.loops[2])
        #expect(picks[3] === picks[0] && picks[4] === picks[1] && picks[5] === picks[2])
        #expect(Set(group.loops.map(\.name)).count == 3)
        group.syncShutdownGracefully()
    }
}

/// Reads one byte at a time from a pipe.
private final class PipeReader: IOHandler {
    let fd: Int32
    let received: Shared<[UInt8]>

    init(fd: Int32, received: Shared<[UInt8]>) {
        self.fd = fd
        self.received = received
    }

    func readable() {
        var byte: UInt8 = 0
        if read(fd, &byte, 1) == 1 { received.update { $0.append(byte) } }
    }

    func writable() {}
    func hangup() {}
    func eventLoopStopping() {}
}

