import CoinWatchStore

/// Where the settings writer puts its batches: the settings journal in production, a wrapper over the database
/// that can fail on demand in tests (a full disk cannot be produced on cue).
///
/// A batch becomes durable in two steps so that the writer can append the next round while the previous one is
/// being synced: `append` applies it where reads of the store find it (without waiting for stable storage) and
/// returns its sequence number; `sync(through:)` returns once every batch appended up to that number is on stable
/// storage. `append` and `sync` may run at the same time on two threads.
protocol SettingsBatchSink: Sendable {
    func append(_ batch: WriteBatch) throws(StoreError) -> UInt64
    func sync(through sequence: UInt64) throws(StoreError)
}

extension WriteAheadJournal: SettingsBatchSink {}
