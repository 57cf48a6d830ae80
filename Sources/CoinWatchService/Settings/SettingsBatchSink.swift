import CoinWatchStore

/// Where the settings writer puts its batches: the settings journal in production, a wrapper over the database
/// that can fail on demand in tests (a full disk cannot be produced on cue).
protocol SettingsBatchSink: Sendable {
    /// Applies `batch` atomically and returns only once it is on stable storage.
    func writeDurably(_ batch: WriteBatch) throws(StoreError)
}

extension WriteAheadJournal: SettingsBatchSink {
    func writeDurably(_ batch: WriteBatch) throws(StoreError) {
        try commit(batch)
    }
}
