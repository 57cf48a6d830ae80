import CoinWatchRPC
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
        /// round or by each other, they wait for the running loop to finish its round instead of preempting it. On
        /// by default when the process has one core (`ProcessorBudget`), where they share it with the loop: durable
        /// saves' p99 fell by 14–47% (median 28%) in nine alternating pairs there, saves/s unchanged. With the cores
        /// shared it did not lower p99 (four pairs), so with more cores they keep the loops' policy
        /// (docs/PERFORMANCE.md).
        public var yieldsToEventLoops: Bool = ProcessorBudget.current().cores == 1

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
