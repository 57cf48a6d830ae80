import CoinWatchClient
import CoinWatchRPC
import Synchronization

/// Where a followed stream stands, as the dashboard's status line shows it.
enum StreamState: Sendable, Hashable {
    /// Connecting (first time or again).
    case connecting
    /// The stream is open.
    case connected
    /// The connection was lost; the next attempt starts at `retryAt` (a `ContinuousClock` instant).
    case waiting(retryAt: ContinuousClock.Instant, attempt: Int, reason: String)
    /// Ended for good: nil after a normal end, else the error to report.
    case ended(CLIError?)
}

/// Follows a server stream on a task, reopening it when the connection is lost.
///
/// The task stores what arrives behind a lock and wakes the console; the UI thread takes it with
/// `drain()`. A lost connection (UNAVAILABLE, or the server ending the stream) is retried with a
/// growing pause; any other error ends the follow, as does failing to reach the server on the very
/// first attempt (exit 3: nothing was ever shown, so retrying silently would only hide a typo).
final class StreamFollower<Element: Sendable>: Sendable {
    private struct Shared {
        /// Items with the generation of the stream they came on.
        var items: [(generation: Int, element: Element)] = []
        var state = StreamState.connecting
        /// Bumped each time a new stream opens, so the reader can restart sequence checks.
        var generation = 0
    }

    /// Pauses between attempts: short at first so a restarted server is picked up fast.
    static var backoff: [Duration] {
        [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5)]
    }

    private let shared = Mutex(Shared())
    private let bufferLimit: Int
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(bufferLimit: Int = 10_000) {
        self.bufferLimit = bufferLimit
    }

    /// Starts following; `open` makes a new stream for each attempt.
    func start(
        session: ClientSession, console: Console, open: @escaping @Sendable (CoinWatchClient) -> RPCResponseStream<Element>
    ) {
        let started = Task.detached { [self] in
            await follow(session: session, console: console, open: open)
        }
        task.withLock { $0 = started }
    }

    /// Stops following and cancels the stream.
    func stop() {
        task.withLock { $0 }?.cancel()
    }

    /// What arrived since the last call, each with the number of the stream it came on (1 for the
    /// first, +1 for each reconnection), and the current state.
    ///
    /// When the reader falls more than `bufferLimit` items behind, the oldest are dropped; for price
    /// streams that shows as a gap in the sequence numbers, which the dashboard reports.
    func drain() -> (items: [(generation: Int, element: Element)], state: StreamState) {
        shared.withLock { shared in
            defer { shared.items.removeAll(keepingCapacity: true) }
            return (shared.items, shared.state)
        }
    }

    private func set(_ state: StreamState, console: Console) {
        shared.withLock { $0.state = state }
        console.wake()
    }

    private func follow(
        session: ClientSession, console: Console, open: @escaping @Sendable (CoinWatchClient) -> RPCResponseStream<Element>
    ) async {
        var attempt = 0
        var everConnected = false
        while !Task.isCancelled {
            set(.connecting, console: console)
            var reason: String
            do {
                try await session.client.connect()
            } catch {
                guard everConnected else {
                    return set(.ended(.unreachable(address: session.address, error)), console: console)
                }
                reason = CLIError.connectFailureReason(error.message)
                await pause(attempt: &attempt, reason: reason, console: console)
                continue
            }
            everConnected = true
            shared.withLock { $0.generation += 1 }
            set(.connected, console: console)
            do {
                var received = false
                for try await item in open(session.client) {
                    if !received {
                        received = true
                        attempt = 0
                    }
                    let first = shared.withLock { shared in
                        if shared.items.count >= bufferLimit { shared.items.removeFirst() }
                        shared.items.append((shared.generation, item))
                        return shared.items.count == 1
                    }
                    // One wake-up per batch: the reader takes everything queued when it wakes.
                    if first { console.wake() }
                }
                reason = "the server ended the stream"
            } catch let error as RPCError {
                guard error.code == .unavailable else { return set(.ended(CLIError(error)), console: console) }
                reason = error.message
            } catch {
                if Task.isCancelled { break }
                return set(.ended(CLIError(code: .rpc, message: "\(error)")), console: console)
            }
            if Task.isCancelled { break }
            await pause(attempt: &attempt, reason: reason, console: console)
        }
        set(.ended(nil), console: console)
    }

    private func pause(attempt: inout Int, reason: String, console: Console) async {
        let pause = Self.backoff[min(attempt, Self.backoff.count - 1)]
        attempt += 1
        set(.waiting(retryAt: .now + pause, attempt: attempt, reason: reason), console: console)
        try? await Task.sleep(for: pause)
    }
}
