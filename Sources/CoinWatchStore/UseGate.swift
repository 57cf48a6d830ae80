import Dispatch
import Synchronization

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Counts the calls currently using a database's C handles, so that closing never frees them under a running call.
///
/// The state is one atomic word, `users * 2 + closing`. A call registers with one atomic add, checks the closing
/// bit in the value it got back, and unregisters with one atomic subtract. `close()` sets the closing bit, which
/// turns every later registration away, then waits until the registered users have left before the handles are
/// freed. The last user to leave wakes the waiting closer.
///
/// Why not a lock: a `Mutex` would serialise every reader, and LevelDB's handle is already safe for concurrent
/// use. A `pthread_rwlock` costs the same shared-cache-line atomics as this counter, but glibc's default rwlock lets
/// a steady stream of readers starve `close()`, and its writer-preferring variant deadlocks a thread that takes the
/// read lock recursively (a `get` inside a `forEach` body). The counter has neither problem: nested calls only add
/// to it, and once closing starts nobody new gets in, so the wait is bounded by the calls already running.
///
/// One case cannot wait: `close()` called from inside a `forEach` or `withSnapshot` body runs on a thread that is
/// itself a registered user. Those bodies record their thread, and such a `close()` defers the final close to
/// whichever user leaves last (at the latest, the body's own call when it returns).
final class UseGate: Sendable {
    /// `users * 2 + (closing ? 1 : 0)`.
    private let state = Atomic<Int>(0)
    /// Set (before the closer's own use ends) when the last leaving user must perform the close.
    private let closeDeferred = Atomic<Bool>(false)
    /// Guarantees the handles are freed exactly once whoever gets there.
    private let finalCloseClaimed = Atomic<Bool>(false)
    /// Signalled each time the user count drops to zero while closing; only the one closer ever waits on it.
    private let drained = DispatchSemaphore(value: 0)
    /// Threads currently running a user body inside a registered call, with nesting depth.
    private let bodyThreads = Mutex<[UInt: Int]>([:])

    /// What `beginClose()` asks its caller to do.
    enum CloseStep {
        /// Another call already started closing; nothing to do.
        case alreadyClosing
        /// No call is using the handles: close them now.
        case closeNow
        /// Calls are running: `waitUntilDrained()`, then close.
        case closeAfterDrain
        /// The caller is inside a body of a registered call; the last user to leave closes.
        case deferred
    }

    /// Registers a user. Returns `false` when closing has begun; the registration stands either way, so the caller
    /// must `leave()` in both cases and must not touch the handles after `false`.
    func enter() -> Bool {
        let old = state.wrappingAdd(2, ordering: .acquiring).oldValue
        return old & 1 == 0
    }

    /// Unregisters a user. Returns `true` when the caller was the last user of a deferred close and must now close
    /// (through `claimFinalClose()`, which settles a race with a rejected caller that also saw the count drop).
    func leave() -> Bool {
        // Releasing: this user's work on the handles happens-before the close. Acquiring: the user that performs a
        // deferred close sees every other user's work and the closer's `closeDeferred` store.
        let new = state.wrappingSubtract(2, ordering: .acquiringAndReleasing).newValue
        guard new == 1 else {
            return false
        }
        if closeDeferred.load(ordering: .acquiring) {
            return true
        }
        drained.signal()
        return false
    }

    /// Turns new users away and says how to proceed.
    func beginClose() -> CloseStep {
        let callerIsUser = currentThreadRunsBody
        let old = state.bitwiseOr(1, ordering: .acquiringAndReleasing).oldValue
        if old & 1 != 0 {
            return .alreadyClosing
        }
        if old == 0 {
            return .closeNow
        }
        if callerIsUser {
            // The caller's own registration keeps the count above zero until after this store.
            closeDeferred.store(true, ordering: .releasing)
            return .deferred
        }
        return .closeAfterDrain
    }

    /// Blocks until every user registered before closing began has left.
    func waitUntilDrained() {
        drained.wait()
    }

    /// Returns `true` exactly once: to the caller that must free the handles.
    func claimFinalClose() -> Bool {
        finalCloseClaimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    var isClosing: Bool {
        state.load(ordering: .acquiring) & 1 != 0
    }

    /// Records that the current thread is about to run a user body inside a registered call.
    func enterBody() {
        let thread = Self.currentThread
        bodyThreads.withLock { $0[thread, default: 0] += 1 }
    }

    func leaveBody() {
        let thread = Self.currentThread
        bodyThreads.withLock { threads in
            if let depth = threads[thread], depth > 1 {
                threads[thread] = depth - 1
            } else {
                threads[thread] = nil
            }
        }
    }

    private var currentThreadRunsBody: Bool {
        let thread = Self.currentThread
        return bodyThreads.withLock { $0[thread] != nil }
    }

    private static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
