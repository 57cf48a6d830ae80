import CoinWatchProto
import CoinWatchRPC

/// A validated write waiting for the writer thread, with whom to tell the outcome.
enum PendingWrite: Sendable {
    case save(SaveCommand, completion: @Sendable (Result<V1.Settings, RPCError>) -> Void)
    case delete(DeleteCommand, completion: @Sendable (Result<Bool, RPCError>) -> Void)

    /// Tells the submitter that the write failed.
    func fail(_ error: RPCError) {
        switch self {
        case .save(_, let completion): completion(.failure(error))
        case .delete(_, let completion): completion(.failure(error))
        }
    }
}
