import CoinWatchRPC
import Synchronization

/// The open streams that were allowed on a credential, so that revoking the credential ends them too.
///
/// A unary call is checked when it starts, which is enough: the next one is checked again. A stream opened with a
/// key that is then revoked would go on delivering for as long as its connection lives, so each stream started
/// with a credential is registered here, and when the credential store reports an invalidation (a key revoked, a
/// device reset) every registered stream is checked again on its own event loop and ended UNAUTHENTICATED if its
/// credential no longer holds. Streams that ended are dropped then, or when the table has doubled since it was
/// last pruned.
final class AuthorizedStreams: Sendable {
    struct Entry: Sendable {
        let stream: ServerStream
        let grant: Grant
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        var pruneAt = 1024
    }

    private let state = Mutex(State())

    var count: Int { state.withLock { $0.entries.count } }

    /// Loop of `stream`: registers a stream allowed by `grant`; it leaves the table when it is ended from outside.
    func add(_ stream: ServerStream, _ grant: Grant) {
        let (id, prune) = state.withLock { state -> (UInt64, Bool) in
            state.nextID += 1
            state.entries[state.nextID] = Entry(stream: stream, grant: grant)
            let prune = state.entries.count >= state.pruneAt
            if prune { state.pruneAt = state.entries.count * 2 }
            return (state.nextID, prune)
        }
        stream.onTerminate { [weak self] _ in self?.remove(id) }
        if prune { self.prune() }
    }

    private func remove(_ id: UInt64) {
        state.withLock { _ = $0.entries.removeValue(forKey: id) }
    }

    /// Checks every registered stream on its loop: one whose grant `isValid` rejects is ended with `error`; one
    /// that has ended is forgotten.
    func revalidate(_ isValid: @escaping @Sendable (Grant) -> Bool, error: RPCError) {
        for (id, entry) in state.withLock({ $0.entries }) {
            entry.stream.eventLoop.execute { [weak self] in
                guard entry.stream.isActive else {
                    self?.remove(id)
                    return
                }
                guard !isValid(entry.grant) else { return }
                self?.remove(id)
                entry.stream.finish(error)
            }
        }
    }

    /// Forgets the streams that ended (checked on their loops).
    private func prune() {
        revalidate({ _ in true }, error: RPCError(code: .unauthenticated, message: ""))
    }
}
