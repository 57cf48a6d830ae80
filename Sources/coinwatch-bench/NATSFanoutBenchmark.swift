import CoinWatchCluster
import CoinWatchProto
import CoinWatchRPC
import Dispatch
import Synchronization

/// NATS's own fan-out on this machine, through nats.c as coinwatchd's price bus uses it (`NATSConnection`): one
/// connection publishes tick-sized messages on `bench.prices.<SYMBOL>` as fast as the library takes them, and each
/// of N connections subscribes to `bench.prices.*` and reads on a thread of its own with the synchronous calls the
/// bus's receiver makes. Deliveries per second across subscribers is the figure docs/SCALING.md sets beside
/// CoinWatch's own fan-out. NATS drops what a subscriber has not taken past its pending limit (a slow consumer):
/// those are counted apart, never as delivered.
struct NATSFanoutBenchmark {
    let options: BenchOptions
    let servers: [String]

    /// Messages published between two round trips to the server.
    static let burst = 1_024

    func run() throws -> Int32 {
        raiseDescriptorLimit()
        let phase = Phase()
        let delivered = DeliveryCount()
        let threadsDone = DispatchGroup()
        let symbols = (0..<options.symbols).map { "BN\($0)" }
        var connections: [NATSConnection] = []
        var subscriptions: [NATSSubscription] = []
        defer { connections.forEach { $0.close() } }
        for index in 0..<options.subscribers {
            var connectOptions = NATSConnection.Options(servers: servers)
            connectOptions.name = "coinwatch-bench-\(index)"
            // A reader that is behind answers pings late; under a firehose that is load, not a dead server.
            connectOptions.pingIntervalMs = 30_000
            let connection = try NATSConnection(options: connectOptions) { _ in }
            let subscription = try connection.subscribe("bench.prices.*")
            // Known to the server once the round trip returns: nothing published later is missed.
            try connection.flush(timeoutMs: 10_000)
            connections.append(connection)
            subscriptions.append(subscription)
            threadsDone.enter()
            NamedThread.start(name: "bench-nats-sub") {
                var local = 0
                while phase.current != .stopping {
                    let message: NATSMessage?
                    do {
                        message = try subscription.next(timeoutMs: 100)
                    } catch {
                        break
                    }
                    if message != nil, phase.current == .measuring { local += 1 }
                    if local >= 1_024 {
                        delivered.value.add(local, ordering: .relaxed)
                        local = 0
                    }
                }
                delivered.value.add(local, ordering: .relaxed)
                threadsDone.leave()
            }
        }
        var publisherOptions = NATSConnection.Options(servers: servers)
        publisherOptions.name = "coinwatch-bench-publisher"
        publisherOptions.pingIntervalMs = 30_000
        let publisher = try NATSConnection(options: publisherOptions) { _ in }
        connections.append(publisher)
        // What the bus carries: a serialized tick per message.
        let payloads = symbols.map { symbol in
            (subject: "bench.prices.\(symbol)",
             bytes: V1.Tick(symbol: symbol, price: V1.Decimal(mantissa: 6_400_012, scale: 2)).serializedBytes())
        }
        let warmupEnd = nowNanos() + UInt64(max(options.warmup, 1) * 1e9)
        let end = warmupEnd + UInt64(options.duration * 1e9)
        var published = 0
        var next = 0
        while true {
            let now = nowNanos()
            if now >= end { break }
            if now >= warmupEnd && phase.current == .warmup { phase.set(.measuring) }
            for _ in 0..<Self.burst {
                try publisher.publish(payloads[next].subject, payloads[next].bytes)
                next = (next + 1) % payloads.count
            }
            // A round trip per burst: the publisher never has more than a burst in flight to the server, as the
            // price bus never has more than its queue (and the server is never left to stall a runaway writer).
            try publisher.flush(timeoutMs: 30_000)
            if phase.current == .measuring { published += Self.burst }
        }
        phase.set(.stopping)
        let elapsed = Double(nowNanos() - warmupEnd) / 1e9
        threadsDone.wait()
        let dropped = subscriptions.reduce(Int64(0)) { $0 + $1.dropped }
        let rate = Double(delivered.value.load(ordering: .relaxed)) / max(elapsed, 1e-9)
        let publishRate = Double(published) / max(elapsed, 1e-9)
        print("natsfanout: \(options.subscribers) subscribers (a connection and a thread each), \(symbols.count) symbols, "
            + "\(formatMillis(elapsed)) s")
        print("  deliveries/s  \(Int(rate.rounded()))")
        print("  published/s   \(Int(publishRate.rounded()))")
        print("  dropped       \(dropped) (slow consumers)")
        if options.json {
            print("{\"mode\":\"natsfanout\",\"subscribers\":\(options.subscribers),\"symbols\":\(symbols.count),"
                + "\"deliveries_per_second\":\(Int(rate.rounded())),\"published_per_second\":\(Int(publishRate.rounded())),"
                + "\"dropped\":\(dropped)}")
        }
        return 0
    }
}

/// Deliveries counted by every subscriber thread.
final class DeliveryCount: Sendable {
    let value = Atomic<Int>(0)
}
