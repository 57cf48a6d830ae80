import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two threads that change settings: the writer, which validates and appends rounds, and the sync thread, which
/// makes them durable and answers them.
///
/// The writer drains the whole queue in each round, applies the requests in order against the latest state (the
/// committed table plus every earlier round still in flight, so `expected_version` checks see every earlier write:
/// one writer makes the history linearizable), appends every changed device in one `WriteBatch` to the journal
/// (which also applies it to LevelDB, unsynced) and hands the round to the sync thread without waiting for the
/// disk. The sync thread takes every round handed over so far, makes them durable with one `fdatasync`, and only
/// then publishes their values, notifies observers and answers, round by round in order. While one sync is in
/// flight the writer already validates, encodes and appends the next round, so a round's CPU work overlaps the
/// previous round's disk wait, and a sync that starts late covers every round appended meanwhile.
///
/// On a single node a failed sync fails every round it covered, and every round validated before the writer heard of
/// the failure (they may build on a state that never became durable): the failure epoch tells them apart. In cluster
/// mode the journal is only this node's copy: a round's states were stored in the cluster before it was appended, so
/// a refused append or a failed sync costs the copy, never the round (docs/SCALING.md, "What each node keeps").
final class SettingsWriter: Sendable {
    typealias ChangeHandler = SettingsStore.ChangeHandler

    let sink: any SettingsBatchSink
    let table: SettingsTable
    let queue: SettingsWriteQueue
    let commits: SettingsCommitQueue
    /// Change handlers. Held while a round's values are published, so `SettingsStore.observeChanges` can take its
    /// initial snapshot without a round slipping in between the snapshot and the registration.
    let observers = Mutex<[ChangeHandler]>([])
    let statistics = Mutex(SettingsStoreStats())
    let clock: @Sendable () -> Int64
    /// Cluster mode's store of record (`SettingsStore.replicate(through:)`); nil on a single node.
    let replicator = Mutex<(any SettingsReplicator)?>(nil)
    /// How often a round runs a device's requests again after its replicated write lost a race.
    static let maxReplicationAttempts = 8
    /// The last round the sync thread is done with: its values are in the table, or it failed.
    let publishedRound = Atomic<UInt64>(0)
    /// Bumped by the sync thread when a sync fails; rounds validated in an older epoch fail with it.
    let failureEpoch = Atomic<UInt64>(0)
    /// The error of the last failed sync, for the rounds of older epochs that reach the sync thread afterwards.
    let lastSyncFailure = Mutex<RPCError?>(nil)
    /// The ids of the writer and sync threads once they run, to spot a `close()` made from a completion or a handler.
    private let writerThreadID = Atomic<UInt>(0)
    private let syncThreadID = Atomic<UInt>(0)

    init(
        sink: any SettingsBatchSink,
        table: SettingsTable,
        queue: SettingsWriteQueue,
        clock: @escaping @Sendable () -> Int64
    ) {
        self.sink = sink
        self.table = table
        self.queue = queue
        self.commits = SettingsCommitQueue(limit: queue.limit)
        self.clock = clock
    }

    /// The writer thread's main loop; returns once the queue is closed and drained and every round handed over.
    func run() {
        writerThreadID.store(Self.currentThreadID, ordering: .relaxed)
        var rounds = RoundState()
        var buffer: [PendingWrite] = []
        while queue.next(into: &buffer) == .process {
            commits.push(process(buffer, &rounds))
            buffer = []
        }
        commits.close()
    }

    /// The sync thread's main loop; returns once the writer has closed the hand-off and every round is answered.
    func runSync() {
        syncThreadID.store(Self.currentThreadID, ordering: .relaxed)
        while true {
            let rounds = commits.takeAll()
            guard !rounds.isEmpty else { return }
            finish(rounds)
            commits.answered(rounds.reduce(0) { $0 + $1.requests.count })
        }
    }

    var isCurrentThread: Bool {
        let current = Self.currentThreadID
        return writerThreadID.load(ordering: .relaxed) == current || syncThreadID.load(ordering: .relaxed) == current
    }

    private static var currentThreadID: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    // MARK: The writer: one round

    /// What the writer thread keeps between rounds.
    struct RoundState {
        var number: UInt64 = 0
        var epoch: UInt64 = 0
        /// Device → (round, state) for devices changed by rounds that may not be published yet.
        var inFlight: [String: (round: UInt64, state: V1.Settings?)] = [:]
    }

    private func process(_ requests: [PendingWrite], _ rounds: inout RoundState) -> SettingsRound {
        let epoch = failureEpoch.load(ordering: .acquiring)
        if epoch != rounds.epoch {
            // A sync failed: the rounds in flight will fail, so their states must not be built on.
            rounds.epoch = epoch
            rounds.inFlight.removeAll()
        } else if !rounds.inFlight.isEmpty && publishedRound.load(ordering: .acquiring) >= rounds.number {
            // Everything handed over is in the table now.
            rounds.inFlight.removeAll(keepingCapacity: true)
        }
        rounds.number += 1
        let nowMs = clock()
        let replicator = self.replicator.withLock { $0 }
        // Canonical device id → its state after this round's requests so far (`.some(nil)`: deleted).
        var staged: [String: V1.Settings?] = [:]
        staged.reserveCapacity(requests.count)
        var outcomes = [SettingsRound.Outcome?](repeating: nil, count: requests.count)
        var changes: [SettingsChange] = []
        var attachedWrites: [(key: [UInt8], value: [UInt8])] = []
        // Values other nodes stored come first: they are already replicated, and a local request of this round
        // must be checked and written against them (its conditional write rests on their revision).
        var local: [Int] = []
        for index in requests.indices {
            guard case .replicated(let device, let settings, let revision) = requests[index] else {
                local.append(index)
                continue
            }
            outcomes[index] = .replicated
            guard replicator?.accept(device, revision: revision) ?? true else { continue }
            let current = latest(device.rawValue, staged, rounds)
            staged[device.rawValue] = .some(settings)
            changes.append(SettingsChange(device: device, old: current, new: settings))
        }
        // Local requests; in cluster mode the devices whose replicated write lost a race (or whose version check
        // may rest on a stale copy) are refreshed and run again, at most `maxReplicationAttempts` times.
        var attempt = 0
        while !local.isEmpty {
            attempt += 1
            var attemptStaged: [String: V1.Settings?] = [:]
            attemptStaged.reserveCapacity(local.count)
            var attemptChanges: [(key: String, change: SettingsChange)] = []
            // Writes a save carries with it (a device's first secret), kept only if the save stands.
            var attemptAttached: [(key: String, write: (key: [UInt8], value: [UInt8]))] = []
            // Canonical id → device, for the replicator only (cluster mode).
            var devices: [String: DeviceID] = [:]
            for index in local {
                let key = requests[index].device.rawValue
                if replicator != nil { devices[key] = requests[index].device }
                let current = attemptStaged[key] ?? latest(key, staged, rounds)
                switch requests[index] {
                case .save(let command, _):
                    if command.isAbandoned {
                        outcomes[index] = .failed(
                            RPCError(code: .cancelled, message: "the call ended before its save was written"))
                        break
                    }
                    switch command.apply(to: current, nowMs: nowMs) {
                    case .success(let settings):
                        attemptStaged[key] = .some(settings)
                        attemptChanges.append((key, SettingsChange(device: command.device, old: current, new: settings)))
                        outcomes[index] = .saved(settings)
                        if let attached = command.attachedWrite { attemptAttached.append((key, attached)) }
                    case .failure(let error):
                        outcomes[index] = .failed(error)
                    }
                case .delete(let command, _):
                    if let error = command.check(against: current) {
                        outcomes[index] = .failed(error)
                    } else {
                        if current != nil {
                            attemptStaged[key] = .some(nil)
                            attemptChanges.append((key, SettingsChange(device: command.device, old: current, new: nil)))
                        }
                        outcomes[index] = .deleted(existed: current != nil)
                    }
                case .replicated:
                    break
                }
            }
            var retry = Set<String>()
            var failed: [String: RPCError] = [:]
            if let replicator {
                let attachedByKey = Dictionary(attemptAttached.map { ($0.key, $0.write) }, uniquingKeysWith: { $1 })
                let writes = attemptStaged.map { key, state in
                    SettingsReplicaWrite(
                        device: devices[key]!, record: state.map { $0.serializedBytes() }, attached: attachedByKey[key])
                }
                for (write, outcome) in zip(writes, replicator.replicate(writes)) {
                    switch outcome {
                    case .stored: break
                    case .conflict: retry.insert(write.device.rawValue)
                    case .failed(let error): failed[write.device.rawValue] = error
                    }
                }
                // A version mismatch on a device this round did not write may rest on a stale copy: confirm it.
                for index in local {
                    guard case .failed(let error)? = outcomes[index], error.code == .aborted else { continue }
                    let key = requests[index].device.rawValue
                    if attemptStaged[key] == nil, failed[key] == nil { retry.insert(key) }
                }
                for key in retry.sorted() {
                    switch replicator.refresh(devices[key]!) {
                    case .newer(let settings):
                        let current = latest(key, staged, rounds)
                        staged[key] = .some(settings)
                        changes.append(SettingsChange(device: devices[key]!, old: current, new: settings))
                    case .current where attemptStaged[key] != nil:
                        // A lost race that finds nothing newer: the write was not stored, and running it again
                        // would rest on the same revision.
                        retry.remove(key)
                        failed[key] = RPCError(code: .unavailable, message: "settings of \(key) not replicated; retry")
                    case .current:
                        // A version mismatch confirmed on the replicated value: it stands.
                        retry.remove(key)
                    case .failed(let error):
                        retry.remove(key)
                        failed[key] = error
                    }
                }
            }
            for (key, change) in attemptChanges where !retry.contains(key) && failed[key] == nil {
                changes.append(change)
            }
            for (key, state) in attemptStaged where !retry.contains(key) && failed[key] == nil {
                staged[key] = state
            }
            for (key, write) in attemptAttached where !retry.contains(key) && failed[key] == nil {
                attachedWrites.append(write)
            }
            for index in local {
                if let error = failed[requests[index].device.rawValue] { outcomes[index] = .failed(error) }
            }
            local = local.filter { retry.contains(requests[$0].device.rawValue) }
            if attempt == Self.maxReplicationAttempts {
                for index in local {
                    outcomes[index] = .failed(RPCError(
                        code: .aborted,
                        message: "settings of \(requests[index].device.rawValue) are being changed on other nodes; retry"))
                }
                break
            }
        }
        let finalOutcomes = outcomes.map { $0 ?? .failed(RPCError(code: .internal, message: "settings request not processed")) }
        var records: [String: [UInt8]] = [:]
        var sequence: UInt64?
        var appendError: RPCError?
        if !staged.isEmpty {
            var batch = Self.encode(staged, into: &records)
            for attached in attachedWrites { batch.put(attached.key, attached.value) }
            do {
                sequence = try sink.append(batch)
            } catch {
                appendError = RPCError(storeWriteFailure: error)
                statistics.withLock { stats in
                    stats.batchesFailed += 1
                    stats.lastWriteError = error.message
                }
            }
            if sequence != nil || replicator != nil {
                for (key, state) in staged {
                    rounds.inFlight[key] = (rounds.number, state)
                }
            }
        }
        return SettingsRound(
            number: rounds.number, epoch: epoch, requests: requests, outcomes: finalOutcomes, staged: staged,
            records: records, changes: changes, sequence: sequence, appendError: appendError,
            isReplicated: replicator != nil)
    }

    /// A device's state as of the requests processed so far: this round's, else the latest round in flight's, else
    /// the table's.
    private func latest(_ key: String, _ staged: [String: V1.Settings?], _ rounds: RoundState) -> V1.Settings? {
        if let stagedState = staged[key] {
            return stagedState
        }
        if let entry = rounds.inFlight[key], entry.round > publishedRound.load(ordering: .acquiring) {
            return entry.state
        }
        return table.get(key)
    }

    /// The round's final state of every changed device as one batch; each saved device's encoded record goes into
    /// `records`, which the table's response and the save's answer are made from without encoding again.
    private static func encode(_ staged: [String: V1.Settings?], into records: inout [String: [UInt8]]) -> WriteBatch {
        var batch = WriteBatch()
        records.reserveCapacity(staged.count)
        for (key, settings) in staged {
            if let settings {
                let record = settings.serializedBytes()
                batch.put(StorageLayout.settingsKey(key), record)
                records[key] = record
            } else {
                batch.delete(StorageLayout.settingsKey(key))
            }
        }
        return batch
    }

    // MARK: The sync thread: durable, visible, answered

    /// Makes `rounds` durable with one sync, then publishes and answers them in order.
    private func finish(_ rounds: [SettingsRound]) {
        var syncError: RPCError?
        if let last = rounds.lazy.compactMap(\.sequence).max(),
            rounds.contains(where: { $0.epoch == failureEpoch.load(ordering: .acquiring) && $0.sequence != nil })
        {
            let started = ContinuousClock.now
            do {
                try sink.sync(through: last)
                let elapsed = ContinuousClock.now - started
                let requests = rounds.reduce(0) { $0 + $1.requests.count }
                statistics.withLock { $0.recordSync(requests: requests, duration: elapsed) }
            } catch {
                syncError = RPCError(storeWriteFailure: error)
                statistics.withLock { stats in
                    stats.batchesFailed += 1
                    stats.lastWriteError = error.message
                }
                if rounds.contains(where: { !$0.isReplicated }) {
                    lastSyncFailure.withLock { $0 = syncError }
                    failureEpoch.add(1, ordering: .acquiringAndReleasing)
                }
            }
        }
        let epoch = failureEpoch.load(ordering: .acquiring)
        EventLoop.coalescingWakes {
            for round in rounds {
                if round.isReplicated {
                    // What it staged is stored in the cluster: memory and the answers follow the cluster, and the
                    // local copy a failure missed is filled from the bucket at the next start.
                    commit(round)
                } else if let error = syncError ?? round.appendError {
                    fail(round, error)
                } else if round.epoch < epoch {
                    fail(round, lastSyncFailure.withLock { $0 } ?? RPCError(code: .unavailable, message: "store write failed"))
                } else {
                    commit(round)
                }
                publishedRound.store(round.number, ordering: .releasing)
            }
        }
    }

    /// Fails every request of `round`: its batch was refused or its sync failed, or it was validated against rounds
    /// that failed (even its version mismatches and deletes of nothing may rest on states that never became durable).
    /// Nothing is published: memory still holds only what earlier rounds made durable.
    private func fail(_ round: SettingsRound, _ error: RPCError) {
        statistics.withLock { $0.writesFailed += UInt64(round.requests.count) }
        for request in round.requests {
            request.fail(error)
        }
    }

    private func commit(_ round: SettingsRound) {
        if !round.staged.isEmpty {
            publish(round.staged, round.records, round.changes)
        }
        answer(round)
    }

    private func answer(_ round: SettingsRound) {
        let requests = round.requests
        let outcomes = round.outcomes
        statistics.withLock { stats in
            if !round.staged.isEmpty {
                stats.recordWrittenBatch(requests: requests.count)
            }
            for outcome in outcomes {
                if case .failed = outcome {
                    stats.writesFailed += 1
                } else if case .replicated = outcome {
                    continue
                } else {
                    stats.writesCommitted += 1
                }
            }
        }
        // Each device's record is the state after its last save in the round: that save's answer can wrap it.
        var ownedRecords = [[UInt8]?](repeating: nil, count: requests.count)
        var recordClaimed = Set<String>(minimumCapacity: requests.count)
        for index in requests.indices.reversed() {
            if case .save(let command, _) = requests[index], case .saved = outcomes[index],
                recordClaimed.insert(command.device.rawValue).inserted
            {
                ownedRecords[index] = round.records[command.device.rawValue]
            }
        }
        for index in requests.indices {
            Self.complete(requests[index], with: outcomes[index], record: ownedRecords[index])
        }
    }

    /// Makes the round visible to readers, then tells observers, on this thread and in request order.
    private func publish(_ staged: [String: V1.Settings?], _ records: [String: [UInt8]], _ changes: [SettingsChange]) {
        let handlers = observers.withLock { handlers in
            if !staged.isEmpty { table.changedSinceLoad.store(true, ordering: .relaxed) }
            for (key, settings) in staged {
                table.set(key, settings, record: records[key])
            }
            return handlers
        }
        guard !changes.isEmpty else {
            return
        }
        for handler in handlers {
            handler(changes)
        }
    }

    /// Answers `request`. A save's response wraps `record`, the record written for its device, when given (it was
    /// the device's last save in the round, nearly always its only one); otherwise it is encoded afresh.
    private static func complete(_ request: PendingWrite, with outcome: SettingsRound.Outcome, record: [UInt8]?) {
        switch (request, outcome) {
        case (_, .failed(let error)):
            request.fail(error)
        case (.save(_, let completion), .saved(let settings)):
            let record = record ?? settings.serializedBytes()
            let response = record.withUnsafeBytes { SettingsRecord.encodedResponse(wrapping: $0) }
            completion(.success(SavedSettings(settings: settings, encodedResponse: response)))
        case (.delete(_, let completion), .deleted(let existed)):
            completion(.success(existed))
        case (.replicated, _), (_, .replicated):
            break
        case (.save, .deleted), (.delete, .saved):
            // Outcomes are appended in request order by the matching case above.
            preconditionFailure("settings writer paired a request with another kind's outcome")
        }
    }
}

extension RPCError {
    /// The answer to requests whose batch LevelDB refused. `UNAVAILABLE` (retryable), since a failed sync may or
    /// may not have left the batch in LevelDB's log; `RESOURCE_EXHAUSTED` when the disk is full, which retrying
    /// soon will not fix.
    init(storeWriteFailure error: StoreError) {
        self.init(
            code: error.isDiskFull ? .resourceExhausted : .unavailable,
            message: "store write failed: \(error.message)"
        )
    }
}
