import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// A validated write waiting for the writer thread, with whom to tell the outcome.
enum PendingWrite: Sendable {
    case save(SaveCommand, completion: @Sendable (Result<SavedSettings, RPCError>) -> Void)
    case delete(DeleteCommand, completion: @Sendable (Result<Bool, RPCError>) -> Void)
    /// A value another node stored (cluster mode), at `revision` of the replicated settings; `nil`: deleted.
    /// Nobody waits for it.
    case replicated(DeviceID, V1.Settings?, revision: UInt64)

    /// The device the write is for.
    var device: DeviceID {
        switch self {
        case .save(let command, _): command.device
        case .delete(let command, _): command.device
        case .replicated(let device, _, _): device
        }
    }

    /// Tells the submitter that the write failed.
    func fail(_ error: RPCError) {
        switch self {
        case .save(_, let completion): completion(.failure(error))
        case .delete(_, let completion): completion(.failure(error))
        case .replicated: break
        }
    }
}

/// A committed save as the writer reports it: the stored settings, and the `SaveSettingsResponse` carrying them,
/// made from the record the writer encoded for LevelDB so the answer needs no second encoding.
struct SavedSettings: Sendable {
    let settings: V1.Settings
    /// `SaveSettingsResponse{settings}`, which is byte for byte `GetSettingsResponse{settings}` (both field 1).
    let encodedResponse: [UInt8]
}
