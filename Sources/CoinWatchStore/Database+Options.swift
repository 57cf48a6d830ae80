extension Database {
    /// How a database is opened and tuned. The defaults suit a small, read-mostly settings store.
    public struct Options: Hashable, Sendable {
        /// Create an empty database when the directory holds none. When `false`, opening a missing database fails
        /// with `.notFound` instead, which is what tools that must not invent an empty store want.
        public var createIfMissing: Bool = true

        /// Fail with `.invalidArgument` when a database already exists, to guard against reusing a directory.
        public var errorIfExists: Bool = false

        /// Verify stored data aggressively and stop at the first inconsistency rather than skipping damaged
        /// records. Off by default (LevelDB's default) so a torn log tail after a crash does not prevent startup.
        public var paranoidChecks: Bool = false

        /// Bytes of uncompressed blocks kept in memory between reads (0 disables the cache).
        public var blockCacheSize: Int = 8 << 20

        /// Bytes of writes buffered in memory before being sorted into a table file. Larger values speed up bulk
        /// loads and make reopening after a crash slower. Must be within 64 KiB ... 1 GiB (LevelDB's limits).
        public var writeBufferSize: Int = 4 << 20

        /// Bits per key of the Bloom filter stored with each table, which lets a `get` for an absent key skip
        /// reading that table; `nil` stores no filter. 10 bits give about 1 % false positives. Must be 1 ... 64.
        public var bloomFilterBitsPerKey: Int? = 10

        /// Upper bound on table files kept open at once. Must be within 74 ... 50 000 (LevelDB's limits).
        public var maxOpenFiles: Int = 1000

        public init() {}

        /// Rejects values LevelDB would silently clamp or misbehave with, so a misconfiguration is reported.
        func validate() throws(StoreError) {
            guard blockCacheSize >= 0 else {
                throw .invalidArgument("blockCacheSize must not be negative (got \(blockCacheSize))")
            }
            guard (64 << 10)...(1 << 30) ~= writeBufferSize else {
                throw .invalidArgument("writeBufferSize must be within 65536 ... 1073741824 (got \(writeBufferSize))")
            }
            if let bits = bloomFilterBitsPerKey, !(1...64 ~= bits) {
                throw .invalidArgument("bloomFilterBitsPerKey must be within 1 ... 64 or nil (got \(bits))")
            }
            guard 74...50_000 ~= maxOpenFiles else {
                throw .invalidArgument("maxOpenFiles must be within 74 ... 50000 (got \(maxOpenFiles))")
            }
        }
    }
}
