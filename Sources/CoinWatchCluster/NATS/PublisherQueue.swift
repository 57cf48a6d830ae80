import CoinWatchCore
import Dispatch
import Synchronization

/// What a cluster publisher thread sends, handed over from any thread: the price bus's ticks and the alert relay's
/// alerts and outbox copies. Producers never wait for the network (`append` takes a lock, never blocks on I/O);
/// the one consumer thread sleeps while there is nothing to send, or while it cannot send (`pause`), and is woken
/// by the first item after it slept for items, by `wake()`, or by `stop()`.
///
/// Bounded: past `limit` items (NATS unreachable for long) the oldest are dropped, and the caller counts them.
final class PublisherQueue<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        /// The consumer sleeps (or is about to), and is signalled once.
        var sleeping = false
        /// It sleeps for items: an append wakes it (not while paused).
        var wantsItems = false
        var stopping = false
    }

    let limit: Int
    private let state = Mutex(State())
    private let signal = DispatchSemaphore(value: 0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Adds `items` (nothing once stopping); returns how many of the oldest were dropped for the limit.
    @discardableResult
    func append(contentsOf items: some Sequence<Item>) -> Int {
        let (dropped, wake) = state.withLock { state -> (Int, Bool) in
            guard !state.stopping else { return (0, false) }
            state.items.append(contentsOf: items)
            let excess = max(0, state.items.count - limit)
            if excess > 0 { state.items.removeFirst(excess) }
            guard state.sleeping && state.wantsItems else { return (excess, false) }
            state.sleeping = false
            return (excess, true)
        }
        if wake { signal.signal() }
        return dropped
    }

    /// The consumer: swaps everything queued into `batch` (passed in empty, so its storage is reused) and returns
    /// true; with nothing queued it sleeps until an item comes, `wake()` or `stop()`, and returns false, after
    /// which the caller checks its own conditions (`isStopping`, the connection) and calls again.
    func take(into batch: inout [Item]) -> Bool {
        // Whoever clears `sleeping` signals, exactly once, so each sleep here is one wait on the semaphore.
        let taken = state.withLock { state -> Bool? in
            if !state.items.isEmpty {
                swap(&batch, &state.items)
                return true
            }
            if state.stopping { return false }
            state.sleeping = true
            state.wantsItems = true
            return nil
        }
        guard let taken else {
            signal.wait()
            return false
        }
        return taken
    }

    /// The consumer cannot send now (its connection is down): sleeps until `wake()`, `stop()` or `timeout`, while
    /// items keep being queued without waking it.
    func pause(timeout: Duration) {
        let asleep = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.sleeping = true
            state.wantsItems = false
            return true
        }
        guard asleep else { return }
        if signal.wait(timeout: .now() + .nanoseconds(Int(max(0, timeout.inNanoseconds)))) == .timedOut {
            // Not signalled: unless a signal is on its way (it cleared `sleeping` first), nothing will come now.
            let pending = state.withLock { state -> Bool in
                defer { state.sleeping = false }
                return !state.sleeping
            }
            if pending { signal.wait() }
        }
    }

    /// Whether `stop()` was called.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Wakes the consumer if it sleeps (a condition it waits on changed, such as the connection coming back).
    func wake() {
        let asleep = state.withLock { state -> Bool in
            defer { state.sleeping = false }
            return state.sleeping
        }
        if asleep { signal.signal() }
    }

    /// Takes no more items and wakes the consumer, which drains what is left and then sees `isStopping`.
    func stop() {
        let asleep = state.withLock { state -> Bool in
            state.stopping = true
            defer { state.sleeping = false }
            return state.sleeping
        }
        if asleep { signal.signal() }
    }
}
