import CoinWatchRPC
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The hand-off between the threads that submit writes and the one writer thread.
///
/// Submitting takes the lock once and never blocks for longer than an append; the writer takes everything that
/// accumulated in one swap, which is what turns a burst of saves into one batch. The writer sleeps on a
/// semaphore only when the queue is empty, and a submitter signals it only when it is asleep, so a busy writer
/// costs submitters no system call. A submitter on an event loop signals at the end of the loop's round instead
/// of at once, so the writer's next round takes every write that round read, as Redis's one thread syncs
/// everything one pass over its clients read: with the writer on another core, an immediate wake would start a
/// round (and a sync) on the first write of the burst.
final class SettingsWriteQueue: Sendable {
    fileprivate struct State {
        var pending: [PendingWrite] = []
        /// The writer found nothing to do and is (about to be) waiting on `wakeup`.
        var writerAsleep = false
        /// Test hook: the writer leaves requests queued until resumed, so a burst can be staged exactly.
        var paused = false
        /// No more submissions; the writer drains what is queued and exits.
        var closing = false
        /// A loop claimed the sleeping writer's wake and gives it when its round ends (`DeferredWake`). `close()`
        /// gives it too, so a round that never ends (a loop stopping mid-round) cannot leave the writer asleep.
        var wakeDeferred = false
    }

    /// What the writer should do next.
    enum Next {
        /// Process the requests now in the buffer passed to `next(into:)`.
        case process
        /// The queue is closed and empty: stop.
        case exit
    }

    let limit: Int
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    /// Gives the wake a loop owes at the end of its round; one at a time is owed, since only the submitter that
    /// finds the writer asleep claims the wake.
    private let deferredWake = DeferredWake()

    init(limit: Int) {
        self.limit = limit
        deferredWake.queue = self
    }

    /// Queues `item`, or says why it cannot be queued (the store is closing, or too much is already pending).
    /// `bypassingLimit`: for values other nodes already stored (cluster mode), which must not be refused for
    /// load; their producer reads them one at a time from a bounded subscription. `loop`: the event loop whose
    /// thread is submitting, if any; a wake the writer needs is then given when that loop's round ends.
    func enqueue(_ item: PendingWrite, bypassingLimit: Bool = false, from loop: EventLoop? = nil) -> RPCError? {
        let deferringLoop = loop?.inEventLoop == true ? loop : nil
        let (rejection, mustWake): (RPCError?, Bool) = state.withLock { state in
            if state.closing {
                return (RPCError(code: .unavailable, message: "settings store is shutting down"), false)
            }
            guard state.pending.count < limit || bypassingLimit else {
                return (
                    RPCError(
                        code: .resourceExhausted,
                        message: "settings writer already has \(limit) writes pending; retry later"
                    ),
                    false
                )
            }
            state.pending.append(item)
            let mustWake = state.takeSleepingWriter()
            if mustWake, deferringLoop != nil { state.wakeDeferred = true }
            return (nil, mustWake)
        }
        if mustWake {
            if let deferringLoop {
                // The loop runs its round's flush hooks on every pass, its last included.
                deferringLoop.flushBeforeWriting(deferredWake)
            } else {
                wakeup.signal()
            }
        }
        return rejection
    }

    /// Gives the wake a loop owed the writer, unless `close()` gave it already.
    fileprivate func giveDeferredWake() {
        let owed = state.withLock { state in
            defer { state.wakeDeferred = false }
            return state.wakeDeferred
        }
        if owed { wakeup.signal() }
    }

    /// Blocks until there is work, then swaps all of it into `buffer` (which must be empty).
    func next(into buffer: inout [PendingWrite]) -> Next {
        while true {
            let mustWait: Bool? = state.withLock { state in
                if !state.pending.isEmpty, !state.paused || state.closing {
                    swap(&state.pending, &buffer)
                    return false
                }
                if state.closing {
                    return nil
                }
                state.writerAsleep = true
                return true
            }
            switch mustWait {
            case nil: return .exit
            case false?: return .process
            case true?:
                wakeup.wait()
                // Woken by a write from outside an event loop's round (or by one loop while another on this core
                // is still reading its round): yielding once lets the rest of the burst be queued, so this round's
                // one fsync carries it instead of one write, with the rest waiting for the next fsync.
                sched_yield()
            }
        }
    }

    /// Rejects later submissions; the writer processes what is already queued, then `next` returns `.exit`.
    func close() {
        let mustWake = state.withLock { state in
            state.closing = true
            if state.wakeDeferred {
                state.wakeDeferred = false
                return true
            }
            return state.takeSleepingWriter()
        }
        if mustWake {
            wakeup.signal()
        }
    }

    /// Test hook: holds queued requests back from the writer until `resume()`. A batch already being processed
    /// finishes; `close()` overrides the pause.
    func pause() {
        state.withLock { $0.paused = true }
    }

    func resume() {
        let mustWake = state.withLock { state in
            state.paused = false
            return state.pending.isEmpty ? false : state.takeSleepingWriter()
        }
        if mustWake {
            wakeup.signal()
        }
    }

    /// Whether the writer is waiting for a wake (for tests that must start from a sleeping writer).
    var isWriterAsleep: Bool {
        state.withLock { $0.writerAsleep }
    }

    /// Requests queued and not yet taken by the writer.
    var count: Int {
        state.withLock { $0.pending.count }
    }
}

extension SettingsWriteQueue.State {
    /// Whether the caller must signal the writer, claiming that duty so the writer is woken exactly once.
    fileprivate mutating func takeSleepingWriter() -> Bool {
        guard writerAsleep, !paused || closing else {
            return false
        }
        writerAsleep = false
        return true
    }
}

/// The writer's wake, given by an event loop when its round ends (`EventLoopFlushHook`).
private final class DeferredWake: EventLoopFlushHook, @unchecked Sendable {
    // @unchecked Sendable: `queue` is set once, in the queue's initialiser, before the hook is shared.
    weak var queue: SettingsWriteQueue?

    func loopWillFlush() {
        queue?.giveDeferredWake()
    }
}
