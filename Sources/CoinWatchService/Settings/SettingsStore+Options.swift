import CoinWatchStore

extension SettingsStore {
    /// Tuning of a settings store.
    public struct Options: Sendable, Hashable {
        /// Writes that may wait for the writer before new ones are refused with `RESOURCE_EXHAUSTED`. Bounds the
        /// memory a flood of saves can take while the disk is slow; the writer takes them all in its next batch.
        public var maxPendingWrites: Int = 65_536
        /// The size of the settings journal when it is created. Each time it fills, the writer waits for LevelDB to
        /// flush its memory table (a checkpoint) before starting it again; a larger journal does that less often.
        public var journalCapacity: Int = WriteAheadJournal.defaultCapacity
        /// Whether the writer and sync threads are batch-scheduled (`NamedThread.Priority.batch`): woken by a loop's
        /// round or by each other, they wait for a running loop to finish its round instead of preempting it, and
        /// each of their rounds then carries more saves. On by default. With the process on one core, durable saves'
        /// p99 fell by 14–47% (median 28%) in nine alternating pairs, saves/s unchanged; with two cores shared with
        /// the load, saves/s rose in 14 of 16 alternating pairs (median about 6%), p99 lower in 14 of them
        /// (docs/PERFORMANCE.md). Off gives them the loops' policy, for a test or a machine where that measures
        /// better.
        public var yieldsToEventLoops: Bool = true

        public init() {}

        func validate() throws(StoreError) {
            guard maxPendingWrites > 0 else {
                throw StoreError(
                    code: .invalidArgument,
                    message: "maxPendingWrites must be positive (got \(maxPendingWrites))"
                )
            }
            guard journalCapacity >= 4096 else {
                throw StoreError(
                    code: .invalidArgument,
                    message: "journalCapacity must be at least 4096 bytes (got \(journalCapacity))"
                )
            }
        }
    }
}
