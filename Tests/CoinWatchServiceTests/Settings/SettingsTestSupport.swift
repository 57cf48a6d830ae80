@testable import CoinWatchService
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

/// A wire decimal from text, e.g. `decimal("64250.5")`.
func decimal(_ text: String) -> V1.Decimal {
    let value = ExactDecimal(text)!
    return V1.Decimal(mantissa: value.mantissa, scale: UInt32(value.scale))
}

/// A rule from decimal text; `nil` leaves a side absent.
func rule(below: String? = nil, above: String? = nil) -> V1.AlertRule {
    V1.AlertRule(below: below.map(decimal), above: above.map(decimal))
}

func device(_ text: String) throws -> DeviceID {
    try DeviceID(validating: text)
}

/// The database directory (not yet created) inside `directory`.
func databasePath(in directory: URL) -> String {
    directory.appendingPathComponent("db").path
}

/// Opens a database and a settings store in a fresh temporary directory, runs `body`, then closes both and removes
/// the directory.
func withStore<R>(
    _ body: (SettingsStore, Database, String) async throws -> R
) async throws -> R {
    try await withTemporaryDirectory(prefix: "settings-test") { directory in
        let path = databasePath(in: directory)
        let database = try Database(path: path)
        defer { database.close() }
        let store = try SettingsStore(database: database)
        defer { store.close() }
        return try await body(store, database, path)
    }
}

/// Opens a database at `path` and a store over it, runs `body`, closes both.
func withReopenedStore<R>(at path: String, _ body: (SettingsStore, Database) throws -> R) throws -> R {
    let database = try Database(path: path)
    defer { database.close() }
    let store = try SettingsStore(database: database)
    defer { store.close() }
    return try body(store, database)
}

extension SettingsStore {
    /// `save` with its result, success or failure, as a value.
    func saveResult(_ request: V1.SaveSettingsRequest) async -> Result<V1.Settings, RPCError> {
        await withCheckedContinuation { continuation in
            save(request) { continuation.resume(returning: $0) }
        }
    }

    func deleteResult(_ request: V1.DeleteSettingsRequest) async -> Result<Bool, RPCError> {
        await withCheckedContinuation { continuation in
            delete(request) { continuation.resume(returning: $0) }
        }
    }

    /// `save` for plain threads: blocks until the completion ran (bounded, a hang guard).
    func saveAndWait(_ request: V1.SaveSettingsRequest) throws -> Result<V1.Settings, RPCError> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<V1.Settings, RPCError>?>(nil)
        save(request) { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        try #require(done.wait(timeout: .now() + 60) == .success, "save did not complete")
        return try #require(result.withLock { $0 })
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}

/// Results of completions delivered on other threads, and a wait for an expected number of them.
final class CompletionLog<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    private let group = DispatchGroup()

    /// Announces one completion that `record` will later deliver.
    func expectOne() {
        group.enter()
    }

    func record(_ value: Value) {
        values.withLock { $0.append(value) }
        group.leave()
    }

    /// The values delivered so far, without waiting.
    var arrived: [Value] {
        values.withLock { $0 }
    }

    /// Waits (bounded, a hang guard) for every announced completion and returns them in arrival order.
    func waitForAll() throws -> [Value] {
        try #require(group.wait(timeout: .now() + 60) == .success, "completions did not all arrive")
        return values.withLock { $0 }
    }
}

/// Runs `body` on `count` new threads at once and returns when all have finished (bounded, a hang guard).
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) throws {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    try #require(group.wait(timeout: .now() + 120) == .success, "worker threads did not finish")
}

/// Every `settings:` record in the database, decoded, by device id.
func storedSettings(in database: Database) throws -> [String: V1.Settings] {
    var result: [String: V1.Settings] = [:]
    for entry in try database.scan(prefix: Array("settings:".utf8)) {
        let settings = try V1.Settings(serializedBytes: entry.value)
        result[settings.deviceID] = settings
    }
    return result
}

/// The store's memory as a dictionary by device id.
func memorySettings(of store: SettingsStore) -> [String: V1.Settings] {
    Dictionary(uniqueKeysWithValues: store.allSettings().map { ($0.deviceID, $0) })
}

/// A sink over a real database that fails with a chosen error while one is set, standing in for a full or broken
/// disk.
final class FailingSink: SettingsBatchSink {
    let database: Database
    let failure = Mutex<StoreError?>(nil)
    /// The error `sync` throws while one is set (appends still succeed).
    let syncFailure = Mutex<StoreError?>(nil)

    init(database: Database) {
        self.database = database
    }

    let sequence = Atomic<UInt64>(0)

    func append(_ batch: WriteBatch) throws(StoreError) -> UInt64 {
        if let error = failure.withLock({ $0 }) {
            throw error
        }
        try database.write(batch, sync: true)
        return sequence.add(1, ordering: .relaxed).newValue
    }

    func sync(through sequence: UInt64) throws(StoreError) {
        if let error = syncFailure.withLock({ $0 }) {
            throw error
        }
    }
}
