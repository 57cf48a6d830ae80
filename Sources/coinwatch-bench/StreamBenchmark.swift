import CoinWatchCommandLine
import CoinWatchProto
import CoinWatchRPC
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Fan-out load: N StreamPrices subscribers while one connection publishes ticks.
///
/// The publisher writes its send time (monotonic nanoseconds) into the price
/// digits, `1000.<nanoseconds>`, so each subscriber measures publish-to-receive
/// latency exactly from the message alone, on the same clock.
struct StreamBenchmark {
    let options: BenchOptions

    func run() throws -> Int32 {
        if options.redis { return try RedisPubSubPeer(options: options).run() }
        raiseDescriptorLimit()
        let options = self.options
        let group = try EventLoopGroup(threads: options.threads, namePrefix: "bench")
        defer { group.syncShutdownGracefully() }
        // Over Connect every stream has its own HTTP/1.1 connection, as a browser's fetch does; over gRPC its own
        // HTTP/2 connection, as the gRPC C++ peer's load gives each subscriber.
        let http = options.connect || options.grpc
        let connectionCount = http ? options.subscribers : min(options.subscribers, options.connectionsGiven ?? 1000)
        let symbols = (0..<options.symbols).map { "BN\($0)" }
        let phase = Phase()
        let connections = try options.connectAll(http ? 1 : connectionCount + 1, on: group, clientName: "coinwatch-bench")
        let publisherConnection: RPCClientConnection
        if let elsewhere = options.publishServer {
            var publishOptions = options
            (publishOptions.host, publishOptions.port) = elsewhere
            publisherConnection = try publishOptions.connectAll(1, on: group, clientName: "coinwatch-bench")[0]
        } else {
            publisherConnection = connections[0]
        }
        let request = V1.StreamPricesRequest(symbols: symbols).serializedBytes()
        let subscribers: [any BenchStreamSubscriber]
        if options.connect {
            let httpRequest = ConnectStreamSubscriber.request(host: options.host, port: options.port, streamRequest: request)
            subscribers = try options.connectRaw(options.subscribers, on: group).map { connection in
                let subscriber = ConnectStreamSubscriber(connection: connection, phase: phase)
                connection.eventLoop.execute { subscriber.start(request: httpRequest) }
                return subscriber
            }
        } else if options.grpc {
            let grpcRequest = GRPCStreamSubscriber.request(authority: "\(options.host):\(options.port)", streamRequest: request)
            subscribers = try options.connectRaw(options.subscribers, on: group).map { connection in
                let subscriber = GRPCStreamSubscriber(connection: connection, phase: phase)
                connection.eventLoop.execute { subscriber.start(request: grpcRequest) }
                return subscriber
            }
        } else {
            subscribers = (0..<options.subscribers).map { index in
                let subscriber = StreamSubscriber(connection: connections[1 + index % connectionCount], phase: phase)
                subscriber.start(request: request)
                return subscriber
            }
        }
        // Wait until every subscriber has its stream (the first message is the empty snapshot or a tick).
        let publisher = TickPublisher(
            connection: publisherConnection, symbols: symbols, rate: options.rate, inFlight: options.publishInFlight, phase: phase)
        publisherConnection.eventLoop.execute { publisher.start() }
        sleepSeconds(max(options.warmup, 1))
        phase.set(.measuring)
        let start = nowNanos()
        sleepSeconds(options.duration)
        phase.set(.stopping)
        let elapsed = Double(nowNanos() - start) / 1e9
        var histogram = LatencyHistogram()
        var gaps = 0
        var errors = 0
        for subscriber in subscribers {
            let (samples, subscriberGaps, failed) = try runBlocking {
                await withCheckedContinuation { continuation in
                    subscriber.eventLoop.execute { continuation.resume(returning: subscriber.collect()) }
                }
            }
            histogram.merge(samples)
            gaps += subscriberGaps
            if failed { errors += 1 }
        }
        let published = try runBlocking {
            await withCheckedContinuation { continuation in
                publisherConnection.eventLoop.execute { continuation.resume(returning: publisher.publishedWhileMeasuring) }
            }
        }
        for connection in connections { connection.close() }
        publisherConnection.close()
        for subscriber in subscribers { subscriber.eventLoop.execute { subscriber.stop() } }
        let sorted = histogram.samples.sorted()
        let rate = Double(histogram.count) / max(elapsed, 1e-9)
        let p50 = histogram.percentile(0.5, sorted: sorted)
        let p99 = histogram.percentile(0.99, sorted: sorted)
        let transport = options.connect ? "connect" : options.grpc ? "grpc" : "native"
        let label = options.connect ? " (Connect, HTTP/1.1)" : options.grpc ? " (gRPC, HTTP/2)" : ""
        print("stream\(label): \(options.subscribers) subscribers on \(connectionCount) connections, \(symbols.count) symbols, "
            + "\(formatMillis(elapsed)) s, \(published) ticks published")
        print("  deliveries/s  \(Int(rate.rounded()))")
        print("  latency ms    p50 \(formatMillis(p50))  p99 \(formatMillis(p99))")
        print("  gaps          \(gaps)   streams failed \(errors)")
        if options.json {
            print("{\"mode\":\"stream\",\"transport\":\"\(transport)\",\"subscribers\":\(options.subscribers),\"connections\":\(connectionCount),"
                + "\"symbols\":\(symbols.count),\"ticks_published\":\(published),\"deliveries\":\(histogram.count),"
                + "\"deliveries_per_second\":\(Int(rate.rounded())),\"p50_ms\":\(formatMillis(p50)),"
                + "\"p99_ms\":\(formatMillis(p99)),\"gaps\":\(gaps),\"errors\":\(errors)}")
        }
        return errors == 0 ? 0 : 1
    }
}

/// Publishes ticks whose price carries the send time: closed loop (`inFlight`
/// batches outstanding) when `rate` is 0, else paced by a timer on the publisher's loop.
///
/// Closed loop, it keeps `outstandingTicks` ticks in flight whatever the batch
/// count, as the Redis peer keeps 64 PUBLISHes in flight: each batch holds an
/// equal share (at least one tick per symbol), cycling through the symbols.
final class TickPublisher: @unchecked Sendable {
    // @unchecked Sendable: all state is touched only on `connection.eventLoop`.
    let connection: RPCClientConnection
    let symbols: [String]
    let rate: Double
    let inFlight: Int
    let phase: Phase
    private var next = 0
    private(set) var publishedWhileMeasuring = 0

    /// Ticks kept in flight in closed loop: the Redis peer's pipeline depth.
    static let outstandingTicks = 64

    init(connection: RPCClientConnection, symbols: [String], rate: Double, inFlight: Int, phase: Phase) {
        self.connection = connection
        self.symbols = symbols
        self.rate = rate
        self.inFlight = inFlight
        self.phase = phase
    }

    func start() {
        if rate > 0 {
            schedule()
        } else {
            let size = max(symbols.count, (Self.outstandingTicks + inFlight - 1) / inFlight)
            for _ in 0..<inFlight { publishBatch(size: size) }
        }
    }

    /// Paced mode: every slice of at least 10 ms, one batch holding the ticks due since the start. Counting from
    /// the start, rather than a fixed number per timer, keeps the rate when the timer fires late on a busy loop
    /// (it published about a quarter fewer ticks than asked with 1,000 subscribers in the same process).
    private func schedule() {
        pacedFrom = nowNanos()
        scheduleSlice()
    }

    private var pacedFrom: UInt64 = 0
    private var pacedSent = 0

    private func scheduleSlice() {
        let sliceSeconds = max(0.01, 1 / rate)
        _ = connection.eventLoop.scheduleTimer(after: .nanoseconds(Int64(sliceSeconds * 1e9))) { [self] in
            guard phase.current != .stopping else { return }
            let due = Int(Double(nowNanos() - pacedFrom) / 1e9 * rate) - pacedSent
            if due > 0 {
                publishBatch(size: due, chained: false)
                pacedSent += due
            }
            scheduleSlice()
        }
    }

    private func publishBatch(size: Int, chained: Bool = true) {
        var ticks: [V1.Tick] = []
        ticks.reserveCapacity(size)
        for _ in 0..<size {
            let stamp = Int64(nowNanos() % 1_000_000_000_000)
            ticks.append(V1.Tick(symbol: symbols[next], price: V1.Decimal(mantissa: 1_000_000_000_000_000 + stamp, scale: 12)))
            next = (next + 1) % symbols.count
        }
        let measuring = phase.current == .measuring
        connection.startUnary(method: V1.CoinWatch.publishPrices.path,
                              payload: V1.PublishPricesRequest(ticks: ticks).serializedBytes()) { [self] result in
            if measuring, case .success = result { publishedWhileMeasuring += size }
            if chained && phase.current != .stopping { publishBatch(size: size) }
        }
    }
}

/// A stream the benchmark reads, whatever its transport; every method is called on `eventLoop`.
protocol BenchStreamSubscriber: AnyObject, Sendable {
    var eventLoop: EventLoop { get }
    /// Deliveries' latencies, sequence gaps, and whether the stream failed.
    func collect() -> (LatencyHistogram, Int, Bool)
    /// Ends the stream after the run.
    func stop()
}

/// One StreamPrices call; counts deliveries, latency and sequence gaps.
final class StreamSubscriber: BenchStreamSubscriber, @unchecked Sendable {
    // @unchecked Sendable: all state is touched only on `connection.eventLoop`
    // (stream callbacks and `collect` run there).
    let connection: RPCClientConnection
    let phase: Phase
    private var deliveries = DeliveryRecorder()
    private var failed = false

    init(connection: RPCClientConnection, phase: Phase) {
        self.connection = connection
        self.phase = phase
    }

    func start(request: [UInt8]) {
        connection.startRawStream(
            method: V1.CoinWatch.streamPrices.path, payload: request,
            onMessage: { [self] bytes in deliveries.record(bytes, measuring: phase.current == .measuring) },
            onEnd: { [self] error in if error != nil { failed = true } })
    }

    func collect() -> (LatencyHistogram, Int, Bool) { (deliveries.histogram, deliveries.gaps, failed) }

    var eventLoop: EventLoop { connection.eventLoop }

    /// Closing the connection ends its streams.
    func stop() {}
}

/// What a subscriber counts of its deliveries, whatever the transport: sequence gaps, and while measuring the
/// publish-to-receive latency the price carries (see `TickPublisher`).
struct DeliveryRecorder {
    private(set) var histogram = LatencyHistogram(capacity: 1 << 12)
    private(set) var gaps = 0
    private var lastSequence: UInt64 = 0

    mutating func record(_ bytes: UnsafeRawBufferPointer, measuring: Bool) {
        guard let update = PriceUpdateFields(bytes) else { return }
        if lastSequence != 0 && update.sequence != lastSequence + 1 { gaps += 1 }
        lastSequence = update.sequence
        // Prices arrive canonical (trailing zeros dropped): bring them back to scale 12.
        guard measuring, update.scale <= 12 else { return }
        var mantissa = update.mantissa
        for _ in 0..<(12 - Int(update.scale)) { mantissa *= 10 }
        guard mantissa >= 1_000_000_000_000_000 else { return }
        let sent = UInt64(mantissa - 1_000_000_000_000_000)
        let now = nowNanos() % 1_000_000_000_000
        if now >= sent { histogram.record(nanoseconds: now - sent) }
    }
}

/// The fields the benchmark needs from a `PriceUpdate` (price and sequence), read in place.
///
/// A full decode per delivery would make the load generator the bottleneck: the subscribers share the machine's
/// cores with the server. This is still a protobuf reader (any field order, unknown fields skipped, every read
/// bounds-checked), on the inlinable `ProtobufCursor`.
struct PriceUpdateFields {
    var mantissa: Int64 = 0
    var scale: UInt64 = 0
    var sequence: UInt64 = 0

    init?(_ bytes: UnsafeRawBufferPointer) {
        var cursor = ProtobufCursor(bytes)
        while !cursor.isAtEnd {
            guard let (field, wireType) = cursor.tag() else { return nil }
            switch (field, wireType) {
            case (2, 2):
                guard let price = cursor.delimited() else { return nil }
                var decimal = ProtobufCursor(price)
                while !decimal.isAtEnd {
                    guard let (decimalField, decimalType) = decimal.tag(), decimalType == 0,
                          let value = decimal.varint()
                    else { return nil }
                    if decimalField == 1 { mantissa = Varint.unzigzag(value) }
                    if decimalField == 2 { scale = value }
                }
            case (4, 0):
                guard let value = cursor.varint() else { return nil }
                sequence = value
            case (_, 0):
                guard cursor.varint() != nil else { return nil }
            case (_, 2):
                guard cursor.delimited() != nil else { return nil }
            default:
                return nil
            }
        }
    }
}
