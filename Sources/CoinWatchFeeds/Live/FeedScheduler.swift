import CoinWatchRPC

/// Timers for a loop-confined feed component: deadlines, pings, backoff. Production runs them on an event loop;
/// tests run them on a manual clock, so liveness and backoff are checked without waiting.
public protocol FeedScheduler: AnyObject {
    var clock: any FeedClock { get }
    /// Runs `body` after `nanoseconds` on the scheduler's thread.
    func schedule(afterNanoseconds nanoseconds: Int64, _ body: @escaping () -> Void) -> FeedTimer
    func cancel(_ timer: FeedTimer)
}

/// A scheduled body, for cancelling.
public struct FeedTimer: Hashable, Sendable {
    let id: UInt64
    init(id: UInt64) {
        self.id = id
    }
}

/// Timers on an event loop, measured by the system's monotonic clock.
final class EventLoopScheduler: FeedScheduler {
    let loop: EventLoop
    let clock: any FeedClock = SystemFeedClock()
    private var handles: [UInt64: TimerHandle] = [:]
    private var nextID: UInt64 = 1

    init(loop: EventLoop) {
        self.loop = loop
    }

    func schedule(afterNanoseconds nanoseconds: Int64, _ body: @escaping () -> Void) -> FeedTimer {
        let id = nextID
        nextID += 1
        handles[id] = loop.scheduleTimer(afterNanoseconds: max(0, nanoseconds)) { [weak self] in
            self?.handles.removeValue(forKey: id)
            body()
        }
        return FeedTimer(id: id)
    }

    func cancel(_ timer: FeedTimer) {
        if let handle = handles.removeValue(forKey: timer.id) {
            _ = loop.cancelTimer(handle)
        }
    }
}
