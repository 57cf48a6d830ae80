import CoinWatchProto
import CoinWatchRPC

/// A validated write waiting for the writer thread, with whom to tell the outcome.
enum PendingWrite: Sendable {
    case save(SaveCommand, completion: @Sendable (Result<SavedSettings, RPCError>) -> Void)
    case delete(DeleteCommand, completion: @Sendable (Result<Bool, RPCError>) -> Void)

    /// Tells the submitter that the write failed.
    func fail(_ error: RPCError) {
        switch self {
        case .save(_, let completion): completion(.failure(error))
        case .delete(_, let completion): completion(.failure(error))
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
