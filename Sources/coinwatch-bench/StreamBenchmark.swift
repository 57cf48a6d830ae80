import CoinWatchCommandLine

/// Fan-out load: subscribers on StreamPrices while ticks are published.
struct StreamBenchmark {
    let options: BenchOptions

    func run() throws -> Int32 {
        if options.redis { return try RedisPubSubPeer(options: options).run() }
        throw UsageError("stream mode needs a server with the price hub")
    }
}
