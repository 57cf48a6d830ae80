import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTLS
import Dispatch
import Synchronization

/// Closed-loop unary load: every connection keeps `inFlight` calls outstanding
/// and starts the next one from the completion of the last, on its event loop.
struct UnaryBenchmark {
    let options: BenchOptions

    func run() throws -> Int32 {
        let options = self.options
        let group = try EventLoopGroup(threads: options.threads, namePrefix: "bench")
        defer { group.syncShutdownGracefully() }
        let method = options.method == "get" ? V1.CoinWatch.getSettings.path : V1.CoinWatch.saveSettings.path
        let payloads = Self.payloads(options)
        if options.method == "get" {
            try prepareDevices()
        }
        let phase = Phase()
        let drivers: [any UnaryLoad]
        switch options.client {
        case .library:
            drivers = try connectLibraryDrivers(group: group, method: method, payloads: payloads, phase: phase)
        case .raw:
            drivers = try connectRawDrivers(group: group, method: method, payloads: payloads, phase: phase)
        }
        for driver in drivers {
            _ = driver.eventLoop.execute { driver.start() }
        }
        sleepSeconds(options.warmup)
        let server = options.serverPID.map { Int32($0) }
        let cpuBefore = server.map { CPUPerOperation.reading(pid: $0) }
        phase.set(.measuring)
        let start = nowNanos()
        sleepSeconds(options.duration)
        phase.set(.stopping)
        let elapsed = Double(nowNanos() - start) / 1e9
        let cpuAfter = server.map { CPUPerOperation.reading(pid: $0) }
        var histogram = LatencyHistogram()
        var errors = 0
        var firstError: String?
        for driver in drivers {
            let (samples, failures, message) = try runBlocking {
                await withCheckedContinuation { continuation in
                    _ = driver.eventLoop.execute {
                        continuation.resume(returning: driver.collect())
                    }
                }
            }
            histogram.merge(samples)
            errors += failures
            if firstError == nil { firstError = message }
        }
        for driver in drivers {
            _ = driver.eventLoop.execute { driver.close() }
        }
        let sorted = histogram.samples.sorted()
        let rps = Double(histogram.count) / max(elapsed, 1e-9)
        let p50 = histogram.percentile(0.50, sorted: sorted)
        let p99 = histogram.percentile(0.99, sorted: sorted)
        let p999 = histogram.percentile(0.999, sorted: sorted)
        // The server's threads over the measured time, per request answered in it (the readings are taken around
        // the phase change, a few requests either way of it).
        let cpu = cpuBefore.flatMap { before in
            cpuAfter.map { CPUPerOperation(from: before, to: $0, operations: histogram.count) }
        }
        print("unary \(options.method): \(options.connections) connections × \(options.inFlight) in flight, "
            + "\(options.client.rawValue) client, \(formatMillis(elapsed)) s")
        print("  requests/s  \(Int(rps.rounded()))")
        print("  latency ms  p50 \(formatMillis(p50))  p99 \(formatMillis(p99))  p999 \(formatMillis(p999))")
        print("  errors      \(errors)\(firstError.map { " (first: \($0))" } ?? "")")
        if let cpu { print("  server CPU per request: \(cpu.text)") }
        if options.json {
            print("{\"mode\":\"unary\",\"method\":\"\(options.method)\",\"connections\":\(options.connections),"
                + "\"in_flight\":\(options.inFlight),\"client\":\"\(options.client.rawValue)\","
                + "\"duration_s\":\(formatMillis(elapsed)),\"requests\":\(histogram.count),"
                + "\"requests_per_second\":\(Int(rps.rounded())),\"p50_ms\":\(formatMillis(p50)),\"p99_ms\":\(formatMillis(p99)),"
                + "\"p999_ms\":\(formatMillis(p999)),\"errors\":\(errors)"
                + (cpu.map { ",\"server_cpu_ns\":\($0.json)" } ?? "") + "}")
        }
        return errors == 0 ? 0 : 1
    }

    /// One library connection per driver, each running `UnaryDriver`.
    private func connectLibraryDrivers(
        group: EventLoopGroup, method: String, payloads: [[UInt8]], phase: Phase
    ) throws -> [any UnaryLoad] {
        let options = self.options
        let connections = try options.connectAll(options.connections, on: group, clientName: "coinwatch-bench")
        // Each connection starts at its own equal share of the devices, so together they visit every device once
        // before any is visited twice (a save benchmark then seeds all `--devices` distinct devices).
        return connections.enumerated().map { index, connection in
            UnaryDriver(connection: connection, method: method, payloads: payloads, inFlight: options.inFlight,
                        offset: index * payloads.count / connections.count, phase: phase)
        }
    }

    /// One plain connection per driver, each running `RawUnaryDriver`.
    func connectRawDrivers(
        group: EventLoopGroup, method: String, payloads: [[UInt8]], phase: Phase
    ) throws -> [any UnaryLoad] {
        let options = self.options
        let frames = try RawCallFrames(method: method, payloads: payloads)
        let loops = (0..<options.connections).map { _ in group.next() }
        return try runBlocking {
            try await withThrowingTaskGroup(of: RawUnaryDriver.self) { tasks in
                for (index, loop) in loops.enumerated() {
                    tasks.addTask {
                        try await RawUnaryDriver.connect(
                            host: options.host, port: options.port, on: loop, frames: frames, inFlight: options.inFlight,
                            offset: index * payloads.count / options.connections, phase: phase,
                            authToken: options.token, tls: options.tls)
                    }
                }
                var all: [any UnaryLoad] = []
                for try await driver in tasks { all.append(driver) }
                return all
            }
        }
    }

    /// Saves a rule for every device the get benchmark reads, so reads find settings.
    /// Creates devices bench-0 … bench-(devices - 1) on the server, each with a BTC rule.
    func prepareDevices() throws {
        let options = self.options
        try runBlocking {
            var configuration = CoinWatchClient.Configuration(host: options.host, port: options.port)
            // With authorisation on, the key (settings:write) saves them; an anonymous save would claim each device.
            configuration.token = options.token
            configuration.tls = options.tlsConfiguration
            configuration.tlsServerName = options.tls?.serverName
            let client = CoinWatchClient(configuration: configuration)
            defer { client.close() }
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for batch in stride(from: 0, to: options.devices, by: 100) {
                    tasks.addTask {
                        for index in batch..<min(batch + 100, options.devices) {
                            _ = try await client.setRule(
                                device: "bench-\(index)", symbol: "BTC", below: ExactDecimal(50_000), above: ExactDecimal(90_000))
                        }
                    }
                }
                try await tasks.waitForAll()
            }
        }
    }

    /// Pre-encoded requests, cycled through during the run.
    static func payloads(_ options: BenchOptions) -> [[UInt8]] {
        (0..<options.devices).map { index in
            if options.method == "get" {
                return V1.GetSettingsRequest(deviceID: "bench-\(index)").serializedBytes()
            }
            // Rules on BTC and ETH around realistic prices, different per device.
            var request = V1.SaveSettingsRequest(deviceID: "bench-\(index)")
            request.setRules["BTC"] = V1.AlertRule(
                below: V1.Decimal(mantissa: Int64(5_500_000 + index % 500_000), scale: 2),
                above: V1.Decimal(mantissa: Int64(7_000_000 + index % 500_000), scale: 2))
            request.setRules["ETH"] = V1.AlertRule(
                below: V1.Decimal(mantissa: Int64(2_500 + index % 500), scale: 0), above: V1.Decimal(mantissa: 4_000, scale: 0))
            return request.serializedBytes()
        }
    }
}

/// Whether completions are counted.
final class Phase: Sendable {
    enum Value: Int { case warmup, measuring, stopping }

    private let value = Atomic<Int>(Value.warmup.rawValue)

    func set(_ phase: Value) { value.store(phase.rawValue, ordering: .releasing) }

    var current: Value { Value(rawValue: value.load(ordering: .acquiring))! }
}

/// One connection's closed loop, whichever client drives it. Every member is called on `eventLoop`.
protocol UnaryLoad: AnyObject, Sendable {
    var eventLoop: EventLoop { get }
    /// Issues the first calls; each completion issues the next until the phase is `.stopping`.
    func start()
    /// The latencies of calls completed while measuring, the errors, and the first error's text.
    func collect() -> (LatencyHistogram, Int, String?)
    func close()
}

/// One connection's closed loop through the client library (`--client library`).
final class UnaryDriver: UnaryLoad, @unchecked Sendable {
    // @unchecked Sendable: everything mutable is touched only on `connection.eventLoop`
    // (start, completions and collect all run there).
    let connection: RPCClientConnection
    let method: String
    let payloads: [[UInt8]]
    let phase: Phase
    let inFlight: Int
    private var next: Int
    private var histogram = LatencyHistogram(capacity: 1 << 18)
    private var errors = 0
    private var firstError: String?

    init(connection: RPCClientConnection, method: String, payloads: [[UInt8]], inFlight: Int, offset: Int, phase: Phase) {
        self.connection = connection
        self.method = method
        self.payloads = payloads
        self.inFlight = inFlight
        self.phase = phase
        self.next = offset % payloads.count
    }

    var eventLoop: EventLoop { connection.eventLoop }

    func start() {
        for _ in 0..<inFlight { issue() }
    }

    func close() { connection.close() }

    private func issue() {
        let payload = payloads[next]
        next = next + 1 == payloads.count ? 0 : next + 1
        let started = nowNanos()
        connection.startUnary(method: method, payload: payload) { [self] result in
            let state = phase.current
            if state == .measuring {
                switch result {
                case .success:
                    histogram.record(nanoseconds: nowNanos() - started)
                case .failure(let error):
                    errors += 1
                    if firstError == nil { firstError = "\(error)" }
                }
            }
            if state != .stopping { issue() }
        }
    }

    func collect() -> (LatencyHistogram, Int, String?) {
        (histogram, errors, firstError)
    }
}

func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    let deadline = DispatchTime.now() + seconds
    DispatchSemaphore(value: 0).wait(timeout: deadline) == .timedOut ? () : ()
}
