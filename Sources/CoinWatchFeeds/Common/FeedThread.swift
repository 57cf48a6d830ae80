import CoinWatchCore
import CoinWatchRPC
import Dispatch
import Foundation
import Synchronization

/// The thread a feed runs on: started once, stopped once, with a sleep that `stop()` cuts short.
final class FeedThread: Sendable {
    private enum Phase {
        case idle, running, stopping, finished
    }

    let name: String
    private let phase = Mutex(Phase.idle)
    /// Signalled by `stop()` to end a sleep early.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled when the body returns.
    private let done = DispatchSemaphore(value: 0)

    init(name: String) {
        self.name = name
    }

    /// Runs `body` on a new thread unless already started.
    func start(_ body: @escaping @Sendable (FeedThread) -> Void) {
        let starting = phase.withLock { phase -> Bool in
            guard phase == .idle else { return false }
            phase = .running
            return true
        }
        guard starting else { return }
        NamedThread.start(name: name) { [self] in
            body(self)
            phase.withLock { $0 = .finished }
            done.signal()
        }
    }

    /// True once `stop()` was called: the body should return.
    var isStopping: Bool {
        phase.withLock { $0 == .stopping }
    }

    /// Sleeps until the monotonic time `deadlineNanos` (or returns at once if it passed). Returns false when the
    /// feed is stopping.
    func sleep(untilMonotonicNanos deadlineNanos: Int64) -> Bool {
        if isStopping { return false }
        let remaining = deadlineNanos - MonotonicClock.nanoseconds()
        if remaining > 0 {
            _ = wake.wait(timeout: .now() + .nanoseconds(Int(remaining)))
        }
        return !isStopping
    }

    /// Asks the body to return and waits for it. Any thread but the feed's own.
    func stop() {
        let mustWait = phase.withLock { phase -> Bool in
            switch phase {
            case .idle:
                phase = .finished
                return false
            case .running:
                phase = .stopping
                return true
            case .stopping:
                return true
            case .finished:
                return false
            }
        }
        guard mustWait else { return }
        wake.signal()
        done.wait()
        // Pass the signal on, so every other waiter returns too.
        done.signal()
    }

    /// Waits until the body returned (a replay without `loop` ends on its own); false on timeout.
    func waitUntilFinished(timeout: Duration) -> Bool {
        if phase.withLock({ $0 == .finished || $0 == .idle }) { return true }
        guard done.wait(timeout: .now() + .nanoseconds(Int(timeout.inNanoseconds))) == .success else { return false }
        done.signal()
        return true
    }
}
