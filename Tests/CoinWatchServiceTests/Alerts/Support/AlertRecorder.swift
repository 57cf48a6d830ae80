import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Synchronization
@testable import CoinWatchService

/// Reads one `StreamAlerts` call (through the client's typed `serverStream`) in a background task and records what
/// arrives, so a test waits for a condition with a bounded poll instead of blocking on the stream.
final class AlertRecorder: Sendable {
    private struct State {
        var alerts: [V1.Alert] = []
        var ended = false
        var error: RPCError?
    }

    private let state = Mutex(State())
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(client: RPCClientConnection, device: String) {
        let stream = client.serverStream(V1.CoinWatch.streamAlerts, V1.StreamAlertsRequest(deviceID: device))
        // The task holds the recorder until the call ends (server shutdown, an error, or `cancel()`).
        let reader = Task { [self] in
            var failure: RPCError?
            do {
                for try await alert in stream {
                    state.withLock { $0.alerts.append(alert) }
                }
            } catch let error as RPCError {
                failure = error
            } catch {
                failure = RPCError(code: .unknown, message: "\(error)")
            }
            state.withLock {
                $0.ended = true
                $0.error = failure
            }
        }
        task.withLock { $0 = reader }
    }

    var alerts: [V1.Alert] { state.withLock { $0.alerts } }
    var count: Int { state.withLock { $0.alerts.count } }
    var ended: Bool { state.withLock { $0.ended } }
    var error: RPCError? { state.withLock { $0.error } }

    /// `summary` of every alert received, in order.
    var summaries: [String] { alerts.map(\.summary) }

    /// Waits (bounded) until at least `count` alerts arrived.
    func waitForCount(_ count: Int) async -> Bool {
        await eventually { self.count >= count }
    }

    /// Waits (bounded) until the call ended.
    func waitForEnd() async -> Bool {
        await eventually { self.ended }
    }

    /// Stops reading, which cancels the call on the server.
    func cancel() {
        task.withLock { $0?.cancel() }
    }
}
