import CoinWatchPush
import Synchronization

/// A provider that records what it is asked to send and answers only when a test says so.
final class FakeAPNs: APNsSending {
    private struct State {
        var onResponses: (@Sendable ([APNsResponse]) -> Void)?
        var received: [APNsRequest] = []
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
        state.withLock { $0.received += requests }
    }

    var status: APNsStatus { APNsStatus(endpoint: "https://fake.invalid") }

    func close() {
        state.withLock { $0.closed = true }
    }

    /// Every request received so far, in order.
    var received: [APNsRequest] { state.withLock { $0.received } }

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
