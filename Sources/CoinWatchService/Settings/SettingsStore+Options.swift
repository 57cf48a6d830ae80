import CoinWatchStore

extension SettingsStore {
    /// Tuning of a settings store.
    public struct Options: Sendable, Hashable {
        /// Writes that may wait for the writer before new ones are refused with `RESOURCE_EXHAUSTED`. Bounds the
        /// memory a flood of saves can take while the disk is slow; the writer takes them all in its next batch.
        public var maxPendingWrites: Int = 65_536

        public init() {}

        func validate() throws(StoreError) {
            guard maxPendingWrites > 0 else {
                throw StoreError(
                    code: .invalidArgument,
                    message: "maxPendingWrites must be positive (got \(maxPendingWrites))"
                )
            }
        }
    }
}
