import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// A validated `DeleteSettingsRequest`.
struct DeleteCommand: Sendable {
    let device: DeviceID
    let expectedVersion: UInt64?

    init(validating request: V1.DeleteSettingsRequest) throws(RPCError) {
        do throws(ValidationError) {
            device = try DeviceID(validating: request.deviceID, field: "device_id")
        } catch {
            throw RPCError(code: .invalidArgument, message: error.description)
        }
        switch request.precondition {
        case .expectedVersion(let version)?: expectedVersion = version
        case nil: expectedVersion = nil
        }
    }

    /// `nil` when the delete may proceed against `current`; `expected_version = 0` accepts a missing device.
    func check(against current: V1.Settings?) -> RPCError? {
        guard let expectedVersion, expectedVersion != (current?.version ?? 0) else {
            return nil
        }
        return .versionMismatch(expected: expectedVersion, device: device, current: current)
    }
}
