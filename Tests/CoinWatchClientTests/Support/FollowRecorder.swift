import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import Synchronization

/// Iterates a followed stream on a task and keeps every event, for tests to poll with `eventually`.
final class FollowRecorder<Item: Sendable>: Sendable {
    private struct Recorded {
        var events: [FollowEvent<Item>] = []
        var finished = false
    }

    private let recorded = Mutex(Recorded())
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// The client the follow runs on, its own so that no other call of the test shares its connection.
    let client: CoinWatchClient

    /// Follows `follow`'s stream on a new client for `address` (`HOST:PORT`, or several separated by commas).
    init(_ address: String, _ follow: (CoinWatchClient) -> FollowStream<Item>) throws {
        client = CoinWatchClient(configuration: try .init(address: address))
        let stream = follow(client)
        // The task holds the recorder until the follow ends: every test ends it, by cancelling or by its error.
        let started = Task { [self] in
            for await event in stream {
                recorded.withLock { $0.events.append(event) }
            }
            recorded.withLock { $0.finished = true }
        }
        task.withLock { $0 = started }
    }

    /// Cancels the iterating task, and with it the follow; the client closes when the follow has let go of it.
    func cancel() { task.withLock { $0 }?.cancel() }

    var events: [FollowEvent<Item>] { recorded.withLock { $0.events } }
    /// Whether the iteration has run out (the follow ended).
    var finished: Bool { recorded.withLock { $0.finished } }

    var states: [FollowState] {
        events.compactMap { event in
            if case .state(let state) = event { return state }
            return nil
        }
    }

    var elements: [Item] {
        events.compactMap { event in
            if case .element(let element) = event { return element }
            return nil
        }
    }

    /// The elements of each stream, in order, split at each `.connected`.
    var streams: [[Item]] {
        var streams: [[Item]] = []
        for event in events {
            switch event {
            case .state(.connected): streams.append([])
            case .element(let element): streams[streams.count - 1].append(element)
            case .state: break
            }
        }
        return streams
    }

    /// The servers of each `.connected`, in order.
    var servers: [String] {
        states.compactMap { state in
            if case .connected(let server, _) = state { return server }
            return nil
        }
    }

    /// The error of `.ended`, once it has come: `.some(nil)` for an end without one.
    var ending: RPCError?? {
        for state in states {
            if case .ended(let error) = state { return .some(error) }
        }
        return nil
    }
}

extension V1.PriceUpdate {
    /// The price as text ("?" when absent or unreadable), for comparing with what was published.
    var priceText: String {
        price.flatMap { ExactDecimal(mantissa: $0.mantissa, scale: Int($0.scale)) }.map { "\($0)" } ?? "?"
    }
}

/// A tick of `symbol` at a whole `price`.
func tick(_ symbol: String, _ price: Int64) -> V1.Tick {
    var tick = V1.Tick()
    tick.symbol = symbol
    tick.price = V1.Decimal(ExactDecimal(price))
    return tick
}

extension FollowOptions {
    /// Retries within a fraction of a second, so a test waits on the server, not on the pause.
    static var quick: FollowOptions {
        var options = FollowOptions()
        options.backoff = FollowBackoff(initial: .milliseconds(20), maximum: .milliseconds(200))
        return options
    }
}
