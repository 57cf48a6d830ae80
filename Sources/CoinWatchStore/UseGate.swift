import Dispatch
import Synchronization

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Counts the calls currently using a database's C handles, so that closing never frees them under a running call.
///
/// The state is one atomic word, `users * 4 + reopening * 2 + closing`. A call registers with one atomic add, checks
/// the two flag bits in the value it got back, and unregisters with one atomic subtract. `close()` sets the closing
/// bit, which turns every later registration away, then waits until the registered users have left before the
/// handles are freed. The last user to leave wakes the waiting closer.
///
/// Reopening (after a failed write, see `Database`) is the same dance, undone at the end: the reopener registers and
/// sets the reopening bit in one compare-and-exchange, which turns later registrations away, waits until it is the
/// only user left, swaps the handles, then clears the bit.
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
    /// `users * 4 + (reopening ? 2 : 0) + (closing ? 1 : 0)`.
    private let state = Atomic<Int>(0)
    private static let closingBit = 1
    private static let reopeningBit = 2
    private static let user = 4
    /// Set (before the closer's own use ends) when the last leaving user must perform the close.
    private let closeDeferred = Atomic<Bool>(false)
    /// Guarantees the handles are freed exactly once whoever gets there.
    private let finalCloseClaimed = Atomic<Bool>(false)
    /// Signalled each time the user count drops to zero while closing; only the one closer ever waits on it.
    private let drained = DispatchSemaphore(value: 0)
    /// Signalled each time the user count drops to one (the reopener) while reopening. Stale signals are possible
    /// (a registration turned away and undone), so the reopener re-checks the count after every wake-up.
    private let othersLeft = DispatchSemaphore(value: 0)
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

    /// What a registration found.
    enum Entry {
        /// The handles may be used until `leave()`.
        case admitted
        case closing
        case reopening
    }

    /// Registers a user. Unless the result is `.admitted` (closing or a reopen has begun), the caller must not touch
    /// the handles; the registration stands either way, so the caller must `leave()` in every case.
    func enter() -> Entry {
        let old = state.wrappingAdd(Self.user, ordering: .acquiring).oldValue
        if old & Self.closingBit != 0 {
            return .closing
        }
        return old & Self.reopeningBit != 0 ? .reopening : .admitted
    }

    /// Unregisters a user. Returns `true` when the caller was the last user of a deferred close and must now close
    /// (through `claimFinalClose()`, which settles a race with a rejected caller that also saw the count drop).
    func leave() -> Bool {
        // Releasing: this user's work on the handles happens-before the close. Acquiring: the user that performs a
        // deferred close sees every other user's work and the closer's `closeDeferred` store.
        let new = state.wrappingSubtract(Self.user, ordering: .acquiringAndReleasing).newValue
        if new & Self.reopeningBit != 0 && new / Self.user == 1 {
            othersLeft.signal()
        }
        guard new == Self.closingBit else {
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
        let old = state.bitwiseOr(Self.closingBit, ordering: .acquiringAndReleasing).oldValue
        if old & Self.closingBit != 0 {
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
        state.load(ordering: .acquiring) & Self.closingBit != 0
    }

    var isReopening: Bool {
        state.load(ordering: .acquiring) & Self.reopeningBit != 0
    }

    /// Registers the caller as the one reopener and waits until every other user has left; from then until
    /// `endReopen()`, registrations are turned away. Returns `false` (with nothing registered) when closing or
    /// another reopen has begun. Must not be called by a thread running a user body: it would wait for itself.
    func beginReopen() -> Bool {
        var current = state.load(ordering: .relaxed)
        while true {
            guard current & (Self.closingBit | Self.reopeningBit) == 0 else {
                return false
            }
            let (exchanged, original) = state.compareExchange(
                expected: current, desired: current + Self.user + Self.reopeningBit, ordering: .acquiringAndReleasing)
            if exchanged {
                break
            }
            current = original
        }
        while state.load(ordering: .acquiring) / Self.user != 1 {
            othersLeft.wait()
        }
        return true
    }

    /// Returns once no reopen is in progress (at once if none is). A reopen lasts one LevelDB open, so this polls
    /// rather than adding a wake-up to every `leave()`.
    func waitWhileReopening() {
        while isReopening {
            usleep(100)
        }
    }

    /// Ends a reopen begun by `beginReopen()`: lets registrations in again and unregisters the reopener. Returns
    /// what `leave()` returns (a `close()` deferred meanwhile may now be the caller's to perform).
    func endReopen() -> Bool {
        // Releasing: the new handles are published before anyone can register and read them.
        state.bitwiseAnd(~Self.reopeningBit, ordering: .releasing)
        return leave()
    }

    /// Whether the current thread runs a user body inside a registered call (and so must not wait for users).
    var callerRunsBody: Bool {
        currentThreadRunsBody
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
