import CoinWatchCore
import Dispatch
import Synchronization

/// One thread, one epoll set: the unit that owns connections, timers and their state.
///
/// Everything registered with a loop (connections, listening sockets, timers) is touched only by
/// the loop's thread, so that state needs no lock. Other threads talk to a loop only through
/// ``execute(_:)``; its inbox is the one lock a loop takes, and only twice per iteration.
///
/// An iteration waits in `epoll_wait`, dispatches the ready descriptors (and expired timers), runs
/// the jobs that arrived in the inbox, and finally flushes every connection that queued output
/// during the iteration, so responses produced together leave in one `sendmsg` per connection.
///
/// ## Threading
/// `execute`, `stop`, `join`, `shutdownGracefully` and `inEventLoop` may be called from any thread.
/// Everything else (registration, timers, connection methods) must run on the loop's thread.
public final class EventLoop: @unchecked Sendable {
    // @unchecked Sendable: the properties under "loop-thread state" are read and written only on the
    // loop's thread (asserted by `assertInEventLoop`); the shared ones are immutable, atomic, or
    // guarded by a Mutex. The epoll and timer descriptors are closed only after `Inbox.closed` is set
    // under the inbox lock; the eventfd other threads write stays open until `epoll` is freed.

    public typealias Job = @Sendable () -> Void

    private struct Inbox {
        var jobs: [Job] = []
        /// The loop is in (or about to enter) a blocking `epoll_wait` and must be woken.
        var sleeping = false
        var stopRequested = false
        /// The loop accepts no more jobs; its descriptors are being or have been closed.
        var closed = false
        var terminated = false
        var terminationWaiters: [@Sendable () -> Void] = []
    }

    /// Thread name (also shown by `top -H`).
    public let name: String

    private let inbox = Mutex(Inbox())
    private let threadID = Atomic<UInt>(0)
    let epoll: Epoll

    // MARK: Loop-thread state

    var handlers = HandlerTable()
    var timers = TimerQueue()
    /// Deadline the timerfd is armed for (Int64.max when disarmed).
    var armedTimerDeadline = Int64.max
    /// Connections with output queued during this iteration, flushed at its end.
    var flushQueue: [Connection] = []
    /// One read buffer shared by all connections of the loop: idle connections hold no buffer.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// Output written during an iteration, shared by all connections of the loop.
    ///
    /// Small writes (headers, replies) are appended here instead of into per-connection buffers, and connections
    /// queue `(offset, length)` references to them. At the end of the iteration the loop flushes every connection;
    /// whatever the kernel did not take is copied into the connection's own storage ("spilled"), and the arena is
    /// reset. So an idle connection owns no output buffer, and when the socket takes everything (the common case)
    /// bytes are copied exactly once.
    var arena = ByteArena(minimumCapacity: 16 * 1024, retainedCapacity: 1 << 20)
    let ioVectors = IOVectorScratch()
    /// Where a connection with a transform (TLS) gathers queued output into one record's worth before encoding
    /// it: made on first use, so loops without such connections hold none.
    var transformScratch: UnsafeMutableRawBufferPointer?
    private var runningJobs: [Job] = []
    /// Counters for diagnostics and tests.
    var stats = Statistics()
    /// `MonotonicClock.nanoseconds()` as first read in this iteration; 0 until then.
    private var iterationNanos: Int64 = 0
    /// Set when the loop begins to stop; registrations are refused from then on.
    private(set) var isStopping = false

    /// Size of the per-loop read buffer.
    public static let readBufferSize = 64 * 1024

    /// Creates a loop and starts its thread.
    public init(name: String = "cw-loop") throws(IOError) {
        self.name = name
        epoll = try Epoll()
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        Sys.spawnThread(name: name) { [self] in
            run()
        }
    }

    deinit {
        readBuffer.deallocate()
        arena.deallocate()
        transformScratch?.deallocate()
    }

    // MARK: Thread identity

    /// True on the loop's own thread.
    public var inEventLoop: Bool {
        threadID.load(ordering: .relaxed) == Sys.currentThreadID()
    }

    /// Traps unless called on the loop's thread (also in release builds).
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inEventLoop, "must be called on event loop \(name)", file: file, line: line)
    }

    /// Like `preconditionInEventLoop`, but only in debug builds: for hot paths.
    @inline(__always)
    func assertInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "must be called on event loop \(name)", file: file, line: line)
    }

    // MARK: Jobs

    /// Runs `job` on the loop's thread, after the jobs submitted before it (FIFO per submitter).
    ///
    /// The loop is woken with an eventfd write only when it may be blocked in `epoll_wait`; a busy
    /// loop picks new jobs up at the end of its current iteration, so a burst costs no syscalls.
    /// - Returns: false (and drops the job) if the loop has stopped.
    @discardableResult
    public func execute(_ job: @escaping Job) -> Bool {
        let (accepted, mustWake) = inbox.withLock { state in
            if state.closed { return (false, false) }
            state.jobs.append(job)
            defer { state.sleeping = false }
            return (true, state.sleeping)
        }
        // After the lock: the write wakes the loop, which may then run at once on this core and would find the
        // lock still held if it were written inside. The eventfd stays open while `self` is alive.
        if mustWake {
            if let batch = WakeBatch.current {
                batch.add(self)
            } else {
                epoll.wake()
            }
        }
        return accepted
    }

    /// Whether the loop has gone to (or is about to enter) a blocking `epoll_wait` and needs a wake to see new
    /// jobs. For tests that must know a job will not be picked up on its own.
    var isAsleep: Bool {
        inbox.withLock { $0.sleeping }
    }

    // MARK: Lifecycle

    /// Asks the loop to stop after its current iteration. Registered handlers are told to close
    /// (``IOHandler/eventLoopStopping()``), pending timers are dropped, jobs already accepted run.
    public func stop() {
        let mustWake = inbox.withLock { state in
            guard !state.closed else { return false }
            state.stopRequested = true
            defer { state.sleeping = false }
            return state.sleeping
        }
        if mustWake { epoll.wake() }
    }

    /// Blocks until the loop's thread has finished. Must not be called on the loop itself.
    public func join() {
        precondition(!inEventLoop, "join() on the loop's own thread would deadlock")
        let done = DispatchSemaphore(value: 0)
        whenTerminated { done.signal() }
        done.wait()
    }

    /// `stop()` then `join()`.
    public func syncShutdownGracefully() {
        stop()
        join()
    }

    /// `stop()` then waits for the loop to finish without blocking a thread.
    public func shutdownGracefully() async {
        stop()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            whenTerminated { continuation.resume() }
        }
    }

    /// Calls `callback` (on the loop thread, or right away if already done) once the loop finished.
    private func whenTerminated(_ callback: @escaping @Sendable () -> Void) {
        let runNow = inbox.withLock { state in
            if state.terminated { return true }
            state.terminationWaiters.append(callback)
            return false
        }
        if runNow { callback() }
    }

    // MARK: The loop

    private func run() {
        threadID.store(Sys.currentThreadID(), ordering: .relaxed)
        while true {
            let block = inbox.withLock { state in
                if state.jobs.isEmpty && !state.stopRequested {
                    state.sleeping = true
                    return true
                }
                return false
            }
            let ready: Int
            do {
                ready = try epoll.wait(timeoutMilliseconds: block ? -1 : 0)
            } catch {
                // EBADF/EFAULT/EINVAL: the loop's own descriptors are broken; nothing can recover.
                fatalError("event loop \(name): \(error)")
            }
            stats.iterations &+= 1
            iterationNanos = 0
            for index in 0..<ready {
                let (events, token) = epoll.event(at: index)
                dispatch(events, token: token)
            }
            let stopRequested = runJobs()
            flushPending()
            if stopRequested { break }
        }
        shutDownOnLoop()
    }

    /// The monotonic clock read once per loop iteration: for bookkeeping that happens per
    /// frame but needs only coarse time (idle timeouts), so that a busy loop does not read
    /// the clock for every frame. Lags real time by at most the iteration's run time.
    /// Loop thread only.
    func iterationNanoseconds() -> Int64 {
        if iterationNanos == 0 {
            iterationNanos = MonotonicClock.nanoseconds()
        }
        return iterationNanos
    }

    /// Runs the jobs in the inbox; returns whether a stop was requested.
    private func runJobs() -> Bool {
        let stopRequested = inbox.withLock { state in
            state.sleeping = false
            swap(&state.jobs, &runningJobs)
            return state.stopRequested
        }
        if !runningJobs.isEmpty {
            for job in runningJobs {
                job()
            }
            runningJobs.removeAll(keepingCapacity: runningJobs.count <= 4096)
        }
        return stopRequested
    }

    @inline(__always)
    private func dispatch(_ events: EpollEvents, token: UInt64) {
        if token == Epoll.timerToken {
            epoll.drainTimer()
            runExpiredTimers()
            return
        }
        if token == Epoll.wakeToken {
            stats.wakeups &+= 1
            epoll.drainWake()
            return
        }
        let registration = IORegistration(token: token)
        guard let handler = handlers.handler(for: registration) else { return }
        if !events.isDisjoint(with: [.input, .readHangup]) {
            handler.readable()
        }
        if events.contains(.output), handlers.isLive(registration) {
            handler.writable()
        }
        if !events.isDisjoint(with: [.hangup, .error]), !events.contains(.input), handlers.isLive(registration) {
            handler.hangup()
        }
    }

    /// Flushes every connection that queued output in this iteration, then recycles the arena.
    func flushPending() {
        var index = 0
        // Flushing can make more connections dirty (a writability callback writing elsewhere), so
        // the queue may grow while we walk it.
        while index < flushQueue.count {
            let connection = flushQueue[index]
            index += 1
            connection.flushFromLoop()
        }
        if index > 0 {
            flushQueue.removeAll(keepingCapacity: index <= 4096)
        }
        arena.reset()
    }

    private func shutDownOnLoop() {
        isStopping = true
        for (handler, fd) in handlers.removeAll() {
            try? epoll.remove(fd)
            handler.eventLoopStopping()
        }
        flushPending()
        timers.removeAll()
        // Jobs accepted before the inbox closes still run (they may own descriptors to close).
        // A job that keeps resubmitting itself is cut off after a bounded number of rounds.
        var rounds = 0
        while rounds < 1000 {
            rounds += 1
            let empty = inbox.withLock { state in
                swap(&state.jobs, &runningJobs)
                if runningJobs.isEmpty { state.closed = true }
                return runningJobs.isEmpty
            }
            if empty { break }
            for job in runningJobs {
                job()
            }
            runningJobs.removeAll()
            flushPending()
        }
        let waiters = inbox.withLock { state in
            state.closed = true
            state.jobs.removeAll()
            epoll.close()
            state.terminated = true
            defer { state.terminationWaiters.removeAll() }
            return state.terminationWaiters
        }
        for waiter in waiters {
            waiter()
        }
    }
}

extension EventLoop {
    /// Cumulative counters of one loop, for diagnostics, benchmarks and tests: syscalls per request
    /// is the figure that decides throughput here.
    public struct Statistics: Sendable, Hashable {
        /// Loop iterations (one `epoll_wait` each).
        public var iterations: UInt64 = 0
        /// Wake-ups through the eventfd (`execute` on a sleeping loop).
        public var wakeups: UInt64 = 0
        /// `read` calls on connections.
        public var reads: UInt64 = 0
        /// `sendmsg` calls on connections.
        public var writes: UInt64 = 0
    }

    /// The loop's counters. Loop thread only.
    public var statistics: Statistics {
        assertInEventLoop()
        return stats
    }
}

extension EventLoop: CustomStringConvertible {
    public var description: String { "EventLoop(\(name))" }
}
