import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
public import CoinWatchStore
import Dispatch
import Foundation
import Synchronization

/// The service's single owner of device settings: every device's settings in memory, LevelDB as the store of
/// record.
///
/// Reads (`settings(for:)`, `getSettings(_:)`) are served from memory on the caller's thread, without touching
/// LevelDB or another thread, because `GetSettings` is the hottest call and event loops must not block. Writes
/// (`save`, `delete`) are validated on the caller's thread and then handed to one dedicated writer thread, which
/// commits whatever has queued up in a single synced LevelDB batch (group commit) before publishing the new
/// values and answering. Memory therefore never shows a value that is not durable, and a failed batch changes
/// nothing that readers can see.
///
/// The store does not own the `Database`: whoever opened it closes it, after `close()` here, because other
/// components (prices, alerts) keep their own key ranges in the same database. See `docs/STORAGE.md`.
public final class SettingsStore: Sendable {
    /// Called on the writer thread once per committed batch that changed something, after the batch is durable and
    /// visible to readers and before its requests are answered, with its changes in commit order. The writer waits
    /// for it, so it should hand the changes on (the alert service queues them for its own thread) rather than
    /// work on them: the time it takes is added to every save.
    public typealias ChangeHandler = @Sendable (_ changes: [SettingsChange]) -> Void

    let table: SettingsTable
    let queue: SettingsWriteQueue
    let writer: SettingsWriter
    /// Entered before the writer thread starts, left when it returns, so any number of `close()` calls can join it.
    private let writerExited = DispatchGroup()
    /// Opens the settings kept in `database`: checks (or, on a new store, writes) the schema version and loads
    /// every device's settings into memory, then starts the writer thread.
    ///
    /// The store's other key ranges are not migrated here: `CoinWatchService` brings an older store up to date
    /// (`StorageSchema.prepare`) before it opens its components.
    ///
    /// - Throws: `StoreError` with code `.notSupported` when the store was written by a newer schema version,
    ///   `.corruption` when a stored record cannot be read back, or what LevelDB reports.
    public convenience init(database: Database, options: Options = Options()) throws(StoreError) {
        try self.init(database: database, sink: nil, options: options, clock: WallClock.milliseconds)
    }

    /// As `init(database:options:)`, calling `onLoadedRule` with every device's rules as the load reads them (the
    /// alert service's start-up collects them this way instead of reading every record again).
    convenience init(
        database: Database,
        journal: WriteAheadJournal? = nil,
        options: Options = Options(),
        onLoadedRule: @escaping (DeviceID, StoredRule) -> Void
    ) throws(StoreError) {
        try self.init(
            database: database, journal: journal, sink: nil, options: options, clock: WallClock.milliseconds,
            onLoadedRule: onLoadedRule
        )
    }

    /// Opens the settings journal of `database`, applying to the database every batch recorded after its last
    /// checkpoint (see `WriteAheadJournal`).
    ///
    /// Whoever opens a store opens this first and reads or writes the store only afterwards (`coinwatchd` and its
    /// offline commands do). Until the replay, LevelDB may lack batches that were acknowledged before a crash of the
    /// machine, device secrets issued by first saves among them; and a write made beside the journal to one of its
    /// keys would be undone when a later open replays the record before it. Writers of such keys outside the settings
    /// writer commit through the journal (`CredentialStore`).
    public static func openJournal(
        _ database: Database, capacity: Int = WriteAheadJournal.defaultCapacity
    ) throws(StoreError) -> WriteAheadJournal {
        try WriteAheadJournal(
            path: StorageLayout.journalPath(database.path),
            database: database,
            checkpointKey: StorageLayout.journalCheckpointKey,
            capacity: capacity
        )
    }

    /// The designated initialiser. Batches go to `sink` when given (tests pass one that can fail on demand), else
    /// through `journal`, else through a journal opened here (after the schema check and before the load, so the
    /// load sees every batch the journal replays) and closed when the writer stops. A journal passed in stays open:
    /// whoever opened it closes it, after `close()` here.
    init(
        database: Database,
        journal: WriteAheadJournal? = nil,
        sink: (any SettingsBatchSink)?,
        options: Options,
        clock: @escaping @Sendable () -> Int64,
        onLoadedRule: ((DeviceID, StoredRule) -> Void)? = nil
    ) throws(StoreError) {
        try options.validate()
        try StorageSchema.check(database)
        let opened: WriteAheadJournal? = sink != nil || journal != nil
            ? nil : try Self.openJournal(database, capacity: options.journalCapacity)
        let table = SettingsTable()
        do throws(StoreError) {
            try Self.load(from: database, into: table, onLoadedRule: onLoadedRule)
        } catch {
            opened?.close()
            throw error
        }
        self.table = table
        self.queue = SettingsWriteQueue(limit: options.maxPendingWrites)
        self.writer = SettingsWriter(sink: sink ?? journal ?? opened!, table: table, queue: queue, clock: clock)

        writerExited.enter()
        writerExited.enter()
        let writer = self.writer
        let writerExited = self.writerExited
        let priority: NamedThread.Priority = options.yieldsToEventLoops ? .batch : .normal
        NamedThread.start(name: "cw-settings", priority: priority) {
            writer.run()
            writerExited.leave()
        }
        NamedThread.start(name: "cw-settings-sync", priority: priority) {
            writer.runSync()
            // A journal opened here lives as long as the threads that write to it; this one finishes last (it
            // answers the rounds the writer handed over before stopping).
            opened?.close()
            writerExited.leave()
        }
    }

    deinit {
        close()
    }

    /// Stops taking writes, commits everything already queued (answering each request as usual), and waits for
    /// the writer thread to finish. Writes submitted afterwards fail with `UNAVAILABLE` "settings store is shutting
    /// down"; reads keep working. Idempotent. Does not close the `Database`.
    ///
    /// Called from the writer thread (inside a completion or a change handler) it cannot wait for itself: it then
    /// only stops the intake, and the writer exits after the queued requests.
    public func close() {
        queue.close()
        if !writer.isCurrentThread {
            writerExited.wait()
        }
    }

    /// A snapshot of the writer's counters.
    public var stats: SettingsStoreStats {
        var stats = writer.statistics.withLock { $0 }
        stats.pendingWrites = queue.count
        return stats
    }
}
