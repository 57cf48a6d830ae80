import CoinWatchClient
import Synchronization

/// Hands a followed stream (`CoinWatchClient.follow`) to the console's UI thread.
///
/// A task iterates the follow, stores what arrives behind a lock and wakes the console; the UI thread takes it with
/// `drain()`. Reconnecting is the library's; what is the CLI's own is that failing to reach the server on the very
/// first attempt ends the follow (exit 3: nothing was ever shown, so retrying silently would only hide a typo).
final class StreamFollower<Element: Sendable>: Sendable {
    private struct Shared {
        /// Items with the number of the stream they came on.
        var items: NewestItems<(stream: Int, element: Element)>
        var state = FollowState.connecting
        var stream = 0
        /// Set once the follow has ended with an error.
        var failure: CLIError?
    }

    private let shared: Mutex<Shared>
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(bufferLimit: Int = 10_000) {
        shared = Mutex(Shared(items: NewestItems(limit: bufferLimit)))
    }

    /// Starts iterating `events`, a follow made with `FollowOptions.cli` on `session`'s client.
    func start(_ events: FollowStream<Element>, session: ClientSession, console: Console) {
        let started = Task.detached { [self] in
            for await event in events {
                record(event, session: session, console: console)
            }
        }
        task.withLock { $0 = started }
    }

    /// Stops following and cancels the stream.
    func stop() {
        task.withLock { $0 }?.cancel()
    }

    /// What arrived since the last call, each with the number of the stream it came on (1 for the first, +1 for
    /// each reconnection), the current state and, once it has ended with one, the error to exit with.
    ///
    /// When the reader falls more than `bufferLimit` items behind, the oldest are dropped; for price streams that
    /// shows as a gap in the sequence numbers, which the dashboard reports.
    func drain() -> (items: [(stream: Int, element: Element)], state: FollowState, failure: CLIError?) {
        shared.withLock { shared in
            (shared.items.drain(), shared.state, shared.failure)
        }
    }

    private func record(_ event: FollowEvent<Element>, session: ClientSession, console: Console) {
        let wake = shared.withLock { shared -> Bool in
            switch event {
            case .element(let element):
                // One wake-up per batch: the reader takes everything queued when it wakes.
                return shared.items.append((shared.stream, element))
            case .state(let state):
                if case .connected(_, let stream) = state { shared.stream = stream }
                if case .ended(let error?) = state {
                    shared.failure = shared.stream == 0 ? .unreachable(address: session.address, error) : CLIError(error)
                }
                shared.state = state
                return true
            }
        }
        if wake { console.wake() }
    }
}

extension FollowOptions {
    /// How the CLI follows: as the library does, except that a server that cannot be reached at first ends it.
    static var cli: FollowOptions {
        var options = FollowOptions()
        options.retryFirstConnection = false
        return options
    }
}
