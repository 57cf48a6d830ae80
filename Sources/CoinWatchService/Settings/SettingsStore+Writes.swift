public import CoinWatchModel
public import CoinWatchProto
public import CoinWatchRPC
import Synchronization

extension SettingsStore {
    /// `SaveSettings`: patches the device's settings durably and answers with what is stored.
    ///
    /// Returns at once: the request is validated on the calling thread and queued for the writer. `completion`
    /// runs on the writer thread once the save is on stable storage and visible to readers, or once it failed
    /// there (`ABORTED` on a version mismatch, `INVALID_ARGUMENT` past the symbol limit, `UNAVAILABLE` or
    /// `RESOURCE_EXHAUSTED` when LevelDB refuses the batch). When validation fails, the store is shutting down or
    /// the queue is full, `completion` runs on the calling thread before this returns.
    ///
    /// Semantics: the first save creates the settings at version 1 and each later one adds 1, even when it changes
    /// no rule (a save is a write). Only symbols named in `set_rules` or `remove_symbols` change; a rule whose
    /// `below` and `above` are both off (absent or zero) removes the symbol.
    public func save(
        _ request: V1.SaveSettingsRequest,
        completion: @escaping @Sendable (Result<V1.Settings, RPCError>) -> Void
    ) {
        let command: SaveCommand
        do {
            command = try SaveCommand(validating: request)
        } catch {
            completion(.failure(error))
            return
        }
        submitSave(command) { completion($0.map(\.settings)) }
    }

    /// Queues a validated save; the RPC method's answer is the response the writer encoded. When the store is
    /// shutting down or the queue is full, `completion` runs on the calling thread before this returns. `loop`:
    /// the event loop calling, which wakes the writer once its round of requests is read.
    func submitSave(
        _ command: SaveCommand, from loop: EventLoop? = nil,
        completion: @escaping @Sendable (Result<SavedSettings, RPCError>) -> Void
    ) {
        if let rejection = queue.enqueue(.save(command, completion: completion), from: loop) {
            completion(.failure(rejection))
        }
    }

    /// `save(_:completion:)` for async callers.
    public func save(_ request: V1.SaveSettingsRequest) async throws(RPCError) -> V1.Settings {
        let result = await withCheckedContinuation { continuation in
            save(request) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// `DeleteSettings`: removes the device's settings durably; the result says whether there were any.
    ///
    /// Threading as for `save(_:completion:)`. With `expected_version` set, the delete happens only if the stored
    /// version matches (`0` matches a device with no settings), else `ABORTED`.
    public func delete(
        _ request: V1.DeleteSettingsRequest,
        completion: @escaping @Sendable (Result<Bool, RPCError>) -> Void
    ) {
        submitDelete(request, completion: completion)
    }

    /// `delete(_:completion:)`, from the event loop `loop` when given (as `submitSave`).
    func submitDelete(
        _ request: V1.DeleteSettingsRequest, from loop: EventLoop? = nil,
        completion: @escaping @Sendable (Result<Bool, RPCError>) -> Void
    ) {
        let command: DeleteCommand
        do {
            command = try DeleteCommand(validating: request)
        } catch {
            completion(.failure(error))
            return
        }
        if let rejection = queue.enqueue(.delete(command, completion: completion), from: loop) {
            completion(.failure(rejection))
        }
    }

    /// `delete(_:completion:)` for async callers; returns whether settings existed.
    public func delete(_ request: V1.DeleteSettingsRequest) async throws(RPCError) -> Bool {
        let result = await withCheckedContinuation { continuation in
            delete(request) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    // MARK: Test hooks

    /// Holds queued writes back from the writer until `resumeWriter()`, so a test can stage a burst exactly.
    func pauseWriter() {
        queue.pause()
    }

    func resumeWriter() {
        queue.resume()
    }
}

extension SettingsStore {
    // MARK: Cluster mode

    /// Whether a replicator is the store of record (cluster mode).
    var isReplicated: Bool { writer.replicator.withLock { $0 } != nil }

    /// Makes `replicator` the store of record: from the next round on, every change is written there (and
    /// acknowledged) before it is answered, and a write that lost a race to another node is run again on the newer
    /// value. Set once, before the server serves.
    public func replicate(through replicator: any SettingsReplicator) {
        writer.replicator.withLock { $0 = replicator }
    }

    /// Applies a value another node stored at `revision` (`nil`: the device's settings were deleted), in the
    /// writer's order with the local writes; a value older than what this node's copy rests on is ignored. Any
    /// thread; returns at once. False once the store is closing.
    @discardableResult
    public func applyReplicated(_ device: DeviceID, _ settings: V1.Settings?, revision: UInt64) -> Bool {
        queue.enqueue(.replicated(device, settings, revision: revision), bypassingLimit: true) == nil
    }
}
