import CoinWatchModel
import CoinWatchProto
import Synchronization

/// Every device registered for push, readable from any thread (GetDevice answers from it on the event loop),
/// written only by the alert thread once a round's batch holding the change is in LevelDB.
final class DeviceRegistry: Sendable {
    private struct State {
        var registrations: [DeviceID: V1.DeviceRegistration] = [:]
        var disabled = 0
    }

    private let state: Mutex<State>

    init(_ registrations: [DeviceID: V1.DeviceRegistration]) {
        state = Mutex(State(
            registrations: registrations, disabled: registrations.values.count { $0.status == .disabled }))
    }

    subscript(device: DeviceID) -> V1.DeviceRegistration? {
        state.withLock { $0.registrations[device] }
    }

    /// Publishes committed changes (`nil`: unregistered).
    func apply(_ changes: [DeviceID: V1.DeviceRegistration?]) {
        guard !changes.isEmpty else { return }
        state.withLock { state in
            for (device, registration) in changes {
                if state.registrations[device]?.status == .disabled { state.disabled -= 1 }
                state.registrations[device] = registration
                if registration?.status == .disabled { state.disabled += 1 }
            }
        }
    }

    var counts: (registered: Int, disabled: Int) {
        state.withLock { ($0.registrations.count, $0.disabled) }
    }
}
