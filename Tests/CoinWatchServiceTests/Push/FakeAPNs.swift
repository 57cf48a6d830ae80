import CoinWatchCore
import CoinWatchPush
import Synchronization

/// A provider that records what it is asked to send and answers only when a test says so.
final class FakeAPNs: APNsSending {
    private struct State {
        var onResponses: (@Sendable ([APNsResponse]) -> Void)?
        var received: [APNsRequest] = []
        /// When each request arrived, wall-clock milliseconds.
        var arrivals: [Int64] = []
        var closed = false
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int = 100) {
        self.capacity = capacity
    }

    func start(onResponses: @escaping @Sendable ([APNsResponse]) -> Void) {
        state.withLock { $0.onResponses = onResponses }
    }

    func send(_ requests: [APNsRequest]) {
        let now = WallClock.milliseconds()
        state.withLock { state in
            state.received += requests
            state.arrivals += requests.map { _ in now }
        }
    }

    var status: APNsStatus { APNsStatus(endpoint: "https://fake.invalid") }

    /// Like the real provider, whose thread lets go of `onResponses` when it ends: the handler reaches the alert
    /// worker, which holds this sender, so keeping it would keep both alive.
    func close() {
        state.withLock { state in
            state.closed = true
            state.onResponses = nil
        }
    }

    /// Every request received so far, in order.
    var received: [APNsRequest] { state.withLock { $0.received } }

    /// Every request received so far with when it arrived (wall-clock milliseconds).
    var arrivals: [(request: APNsRequest, at: Int64)] {
        state.withLock { Array(zip($0.received, $0.arrivals)) }
    }

    /// Request number `index` (from 0), if it arrived.
    func sent(_ index: Int) -> APNsRequest? {
        state.withLock { $0.received.indices.contains(index) ? $0.received[index] : nil }
    }

    /// Answers `request` as APNs would with `status` and `reason`.
    func answer(_ request: APNsRequest, status: Int, reason: String = "", outcome: APNsOutcome) {
        let respond = state.withLock { $0.onResponses }
        respond?([APNsResponse(request: request, status: status, reason: reason, failure: "", outcome: outcome)])
    }

    func deliver(_ request: APNsRequest) { answer(request, status: 200, outcome: .delivered) }
}
