extension PriceHub {
    /// The hub's limits and timings. Every limit exists so that no client and no feed can make the hub hold
    /// unbounded memory.
    public struct Configuration: Sendable {
        /// Most symbols one `StreamPrices` or `GetPrices` request may name.
        public var maxSymbolsPerRequest = 256
        /// Largest `min_interval_ms` a stream may ask for.
        public var maxIntervalMs: UInt32 = 60_000
        /// Most distinct symbols the hub tracks; ticks for further new symbols are refused.
        public var maxKnownSymbols = 4_096
        /// Most ticks one `PublishPrices` call may carry.
        public var maxTicksPerPublish = 10_000
        /// Most ticks waiting for one event loop. Streams that keep up get every tick; a loop that falls further
        /// behind than this conflates its backlog to the latest tick per symbol, which also bounds how stale its
        /// streams can get (1,024 ticks are 50 ms at 20,000 ticks/s).
        public var maxQueuedTicksPerLoop = 1_024
        /// A stream whose connection stays above its high watermark this long is ended RESOURCE_EXHAUSTED.
        /// While it waits it holds at most one pending price per symbol.
        public var slowSubscriberTimeout: Duration = .seconds(10)
        /// How often changed last prices are written to the store (without fsync); `close()` writes the rest.
        public var persistInterval: Duration = .seconds(1)

        public init() {}
    }
}
