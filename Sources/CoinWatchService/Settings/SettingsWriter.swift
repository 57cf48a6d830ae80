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

/// The body of the one thread that changes settings.
///
/// Each round drains the whole queue, applies the requests in order against the committed state plus the changes
/// of earlier requests in the same round (so `expected_version` checks see every earlier write: one writer makes
/// the history linearizable), writes every changed device in one synced `WriteBatch`, and only then publishes the
/// new values, notifies observers and answers. Under load the queue refills while a batch is being synced, so one
/// `fsync` pays for many saves.
final class SettingsWriter: Sendable {
    typealias ChangeHandler = SettingsStore.ChangeHandler

    let sink: any SettingsBatchSink
    let table: SettingsTable
    let queue: SettingsWriteQueue
    /// Change handlers. Held while a round's values are published, so `SettingsStore.observeChanges` can take its
    /// initial snapshot without a round slipping in between the snapshot and the registration.
    let observers = Mutex<[ChangeHandler]>([])
    let statistics = Mutex(SettingsStoreStats())
    let clock: @Sendable () -> Int64
    /// The writer thread's id once it runs, to spot a `close()` made from a completion or a handler.
    private let threadID = Atomic<UInt>(0)

    init(
        sink: any SettingsBatchSink,
        table: SettingsTable,
        queue: SettingsWriteQueue,
        clock: @escaping @Sendable () -> Int64
    ) {
        self.sink = sink
        self.table = table
        self.queue = queue
        self.clock = clock
    }

    /// The thread's main loop; returns once the queue is closed and drained.
    func run() {
        threadID.store(Self.currentThreadID, ordering: .relaxed)
        var buffer: [PendingWrite] = []
        while queue.next(into: &buffer) == .process {
            process(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    var isCurrentThread: Bool {
        threadID.load(ordering: .relaxed) == Self.currentThreadID
    }

    private static var currentThreadID: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    // MARK: One round

    private enum Outcome {
        case saved(V1.Settings)
        case deleted(existed: Bool)
        case failed(RPCError)
    }

    private func process(_ requests: [PendingWrite]) {
        let nowMs = clock()
        // Canonical device id → its state after this round's requests so far (`.some(nil)`: deleted).
        var staged: [String: V1.Settings?] = [:]
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(requests.count)
        var changes: [SettingsChange] = []
        for request in requests {
            switch request {
            case .save(let command, _):
                let key = command.device.rawValue
                let current = committedOrStaged(key, staged)
                switch command.apply(to: current, nowMs: nowMs) {
                case .success(let settings):
                    staged[key] = .some(settings)
                    changes.append(SettingsChange(device: command.device, old: current, new: settings))
                    outcomes.append(.saved(settings))
                case .failure(let error):
                    outcomes.append(.failed(error))
                }
            case .delete(let command, _):
                let key = command.device.rawValue
                let current = committedOrStaged(key, staged)
                if let error = command.check(against: current) {
                    outcomes.append(.failed(error))
                } else {
                    if current != nil {
                        staged[key] = .some(nil)
                        changes.append(SettingsChange(device: command.device, old: current, new: nil))
                    }
                    outcomes.append(.deleted(existed: current != nil))
                }
            }
        }

        var records: [String: [UInt8]] = [:]
        if !staged.isEmpty {
            let (storeError, written) = write(staged)
            records = written
            if let storeError {
                statistics.withLock { stats in
                    stats.batchesFailed += 1
                    stats.writesFailed += UInt64(requests.count)
                    stats.lastWriteError = storeError.message
                }
                let error = RPCError(storeWriteFailure: storeError)
                // Nothing was published: memory still holds only what earlier batches made durable.
                EventLoop.coalescingWakes {
                    for request in requests {
                        request.fail(error)
                    }
                }
                return
            }
            publish(staged, records, changes)
        }

        statistics.withLock { stats in
            if !staged.isEmpty {
                stats.recordWrittenBatch(requests: requests.count)
            }
            for outcome in outcomes {
                if case .failed = outcome {
                    stats.writesFailed += 1
                } else {
                    stats.writesCommitted += 1
                }
            }
        }
        // Each device's record is the state after its last save in the round: that save's answer can wrap it.
        var ownedRecords = [[UInt8]?](repeating: nil, count: requests.count)
        var recordClaimed = Set<String>()
        for index in requests.indices.reversed() {
            if case .save(let command, _) = requests[index], case .saved = outcomes[index],
               recordClaimed.insert(command.device.rawValue).inserted {
                ownedRecords[index] = records[command.device.rawValue]
            }
        }
        EventLoop.coalescingWakes {
            for index in requests.indices {
                Self.complete(requests[index], with: outcomes[index], record: ownedRecords[index])
            }
        }
    }

    /// A device's state as of the requests processed so far in this round.
    private func committedOrStaged(_ key: String, _ staged: [String: V1.Settings?]) -> V1.Settings? {
        if let stagedState = staged[key] {
            return stagedState
        }
        return table.get(key)
    }

    /// Writes the round's final state of every changed device; the error (nil on success) and each saved device's
    /// encoded record, which the table's response is made from without encoding again.
    private func write(_ staged: [String: V1.Settings?]) -> (StoreError?, [String: [UInt8]]) {
        var batch = WriteBatch()
        var records: [String: [UInt8]] = [:]
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
        do {
            try sink.writeDurably(batch)
            return (nil, records)
        } catch {
            return (error, records)
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
    private static func complete(_ request: PendingWrite, with outcome: Outcome, record: [UInt8]?) {
        switch (request, outcome) {
        case (_, .failed(let error)):
            request.fail(error)
        case (.save(_, let completion), .saved(let settings)):
            let record = record ?? settings.serializedBytes()
            let response = record.withUnsafeBytes { SettingsRecord.encodedResponse(wrapping: $0) }
            completion(.success(SavedSettings(settings: settings, encodedResponse: response)))
        case (.delete(_, let completion), .deleted(let existed)):
            completion(.success(existed))
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
        let diskFull = ["No space left on device", "Disk quota exceeded"].contains { error.message.contains($0) }
        self.init(
            code: diskFull ? .resourceExhausted : .unavailable,
            message: "store write failed: \(error.message)"
        )
    }
}
