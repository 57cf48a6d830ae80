import CoinWatchClient
import CoinWatchCommandLine
import CoinWatchCore
import CoinWatchFeeds
import CoinWatchProto
import CoinWatchRPC
import Foundation

/// `feeds` mode: coinwatchd with a live venue against a local fake exchange (scripts/feeds/fake_exchange.py),
/// each part in its own coinwatchd:
///
/// - ingest: trade messages per second coinwatchd takes from the exchange flooding as fast as it can over wss://
///   (ws:// with `--plain`), beside the same messages through `--feed replay:FILE@max,loop` in the same run; both
///   read from Health/Check's per-source message counts over `--duration` seconds after `--warmup`;
/// - latency: at `--rate` messages per second (default 1,000), exchange-send → StreamPrices-receive p50 and p99,
///   beside the same rate pushed with PublishPrices at the same time (each price carries its send time in
///   microseconds of the wall clock, which both processes share);
/// - memory: the server's resident memory while the exchange sends one 100 MiB message, then endless continuation
///   frames, against `--feed-max-message-bytes` (1 MiB): it must stay within the limit plus 1 MiB;
/// - read (only when asked for): the venue side of a message in this process, without the exchange, TLS, the
///   aggregator or the hub (`VenueReadBenchmark`): the median of five passes of 3,000,000 messages, in nanoseconds.
///
/// Finnhub's format is used throughout (one trade per message, no trade ids to repeat when the flood reuses its
/// messages).
struct FeedBenchmark {
    let options: BenchOptions
    let feed: FeedBenchOptions

    struct Endpoint: Sendable {
        let exchange: BenchProcess
        let url: String
    }

    func run() throws -> Int32 {
        let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("coinwatch-bench-feeds-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let certificates = feed.plain ? nil : try makeCertificates(in: work.path)
        var results: [String: String] = [:]
        var failed = false
        if feed.parts.contains("ingest") {
            let (live, replay) = try ingest(work: work.path, certificates: certificates)
            let ratio = replay.perSecond > 0 ? live.perSecond / replay.perSecond : 0
            print("feeds ingest: \(feed.plain ? "ws" : "wss")://, \(formatMillis(options.duration)) s each")
            print("  live    \(Int(live.perSecond.rounded())) messages/s   CPU per message: \(live.cpu.text)")
            print("  replay  \(Int(replay.perSecond.rounded())) messages/s   CPU per message: \(replay.cpu.text)")
            print("  ratio   \(formatMillis(ratio)) (target ≥ 0.5)")
            results["ingest_live_per_second"] = "\(Int(live.perSecond.rounded()))"
            results["ingest_replay_per_second"] = "\(Int(replay.perSecond.rounded()))"
            results["ingest_ratio"] = formatMillis(ratio)
            results["ingest_live_cpu_ns"] = live.cpu.json
            results["ingest_replay_cpu_ns"] = replay.cpu.json
        }
        if feed.parts.contains("latency") {
            let (live, publish) = try latency(work: work.path, certificates: certificates)
            print("feeds latency: \(Int(feed.rate)) messages/s each, \(formatMillis(options.duration)) s")
            print("  live     p50 \(formatMillis(live.p50)) ms  p99 \(formatMillis(live.p99)) ms  (\(live.count) samples)")
            print("  publish  p50 \(formatMillis(publish.p50)) ms  p99 \(formatMillis(publish.p99)) ms  (\(publish.count) samples)")
            print("  p99 difference \(formatMillis(live.p99 - publish.p99)) ms (target ≤ 1 ms)")
            results["latency_live_p50_ms"] = formatMillis(live.p50)
            results["latency_live_p99_ms"] = formatMillis(live.p99)
            results["latency_publish_p50_ms"] = formatMillis(publish.p50)
            results["latency_publish_p99_ms"] = formatMillis(publish.p99)
        }
        if feed.parts.contains("memory") {
            let memory = try self.memory(work: work.path, certificates: certificates)
            let bound = feed.maxMessageBytes + (1 << 20)
            print("feeds memory: limit \(feed.maxMessageBytes) bytes; resident \(memory.baseline / 1024) KiB at rest")
            print("  100 MiB message      +\(memory.huge / 1024) KiB\(memory.huge <= bound ? "" : "  OVER the bound")")
            print("  endless continuation +\(memory.endless / 1024) KiB\(memory.endless <= bound ? "" : "  OVER the bound")")
            results["memory_baseline_bytes"] = "\(memory.baseline)"
            results["memory_huge_growth_bytes"] = "\(memory.huge)"
            results["memory_endless_growth_bytes"] = "\(memory.endless)"
            failed = failed || memory.huge > bound || memory.endless > bound
        }
        if feed.parts.contains("read") {
            var passes: [Double] = []
            for _ in 0..<5 {
                let outcome = VenueReadBenchmark.run(messages: 3_000_000)
                guard outcome.published == outcome.messages else {
                    throw BenchError("feeds read: the source published \(outcome.published) of \(outcome.messages) prices")
                }
                passes.append(outcome.nanosecondsPerMessage)
            }
            passes.sort()
            print("feeds read: the venue side of a Finnhub message, in process (median of 5 passes)")
            print("  \(formatMillis(passes[2])) ns/message (passes \(passes.map { formatMillis($0) }.joined(separator: " ")))")
            results["read_ns_per_message"] = formatMillis(passes[2])
        }
        if options.json {
            let fields = results.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }
            print("{\"mode\":\"feeds\",\(fields.joined(separator: ","))}")
        }
        return failed ? 1 : 0
    }

    // MARK: Parts

    private func ingest(work: String, certificates: Certificates?) throws -> (live: IngestRate, replay: IngestRate) {
        let recording = work + "/flood.jsonl"
        var text = ""
        for index in 0..<100_000 {
            text += VenueReadBenchmark.floodMessage(index) + "\n"
        }
        try text.write(toFile: recording, atomically: true, encoding: .utf8)
        let replayServer = try startServer(work: work, name: "replay", arguments: ["--feed", "replay:\(recording)@max,loop"])
        let replay = try messageRate(replayServer, source: "replay")
        replayServer.process.stop()

        let endpoint = try startExchange(work: work, certificates: certificates)
        let liveServer = try startServer(work: work, name: "live", arguments: liveArguments(endpoint, certificates))
        try waitConnected(liveServer.port)
        endpoint.exchange.send(#"{"cmd":"flood","symbol":"BTC","count":2000000000,"rate":0}"#)
        let live = try messageRate(liveServer, source: "finnhub", exchange: endpoint.exchange)
        liveServer.process.stop()
        endpoint.exchange.stop()
        return (live, replay)
    }

    struct Percentiles {
        var p50: Double
        var p99: Double
        var count: Int
    }

    private func latency(work: String, certificates: Certificates?) throws -> (live: Percentiles, publish: Percentiles) {
        let endpoint = try startExchange(work: work, certificates: certificates)
        let server = try startServer(work: work, name: "latency", arguments: liveArguments(endpoint, certificates))
        try waitConnected(server.port)
        let rate = feed.rate
        let total = options.warmup + options.duration
        let port = server.port
        let (live, publish) = try runBlocking { () async throws -> ([UInt32], [UInt32]) in
            let client = CoinWatchClient(configuration: .init(host: "127.0.0.1", port: port))
            defer { client.close() }
            let stream = client.streamPrices(symbols: ["BTC", "ETH"])
            let measureFrom = WallClock.microseconds() + Int64(options.warmup * 1e6)
            let until = WallClock.microseconds() + Int64(total * 1e6)
            let reader = Task { () throws -> ([UInt32], [UInt32]) in
                var live: [UInt32] = []
                var published: [UInt32] = []
                for try await update in stream {
                    let now = WallClock.microseconds()
                    guard let sent = sentMicroseconds(update.price), sent >= measureFrom else {
                        if now > until { break }
                        continue
                    }
                    let sample = UInt32(clamping: max(0, now - sent))
                    if update.symbol == "BTC" { live.append(sample) } else { published.append(sample) }
                    if now > until { break }
                }
                return (live, published)
            }
            endpoint.exchange.send(#"{"cmd":"flood","symbol":"BTC","count":\#(Int(rate * (total + 1))),"rate":\#(rate)}"#)
            let start = MonotonicSeconds.now()
            var index = 0
            while MonotonicSeconds.now() - start < total + 0.5 {
                let due = start + Double(index) / rate
                let wait = due - MonotonicSeconds.now()
                if wait > 0 { try await Task.sleep(for: .microseconds(Int(wait * 1e6))) }
                let price = V1.Decimal(mantissa: 10_000_000_000_000_000 + WallClock.microseconds(), scale: 16)
                _ = try await client.publish([V1.Tick(symbol: "ETH", price: price, timeMs: 0)])
                index += 1
            }
            return try await reader.value
        }
        server.process.stop()
        endpoint.exchange.stop()
        return (percentiles(live), percentiles(publish))
    }

    private func memory(work: String, certificates: Certificates?) throws -> (baseline: Int, huge: Int, endless: Int) {
        let endpoint = try startExchange(work: work, certificates: certificates)
        let server = try startServer(work: work, name: "memory", arguments: liveArguments(endpoint, certificates))
        try waitConnected(server.port)
        sleepSeconds(1)
        let baseline = try IdleBenchmark.residentBytes(pid: server.process.pid)
        endpoint.exchange.send(#"{"cmd":"huge","bytes":104857600}"#)
        let huge = try peakGrowth(server.process.pid, baseline: baseline, seconds: 10) {
            endpoint.exchange.output.contains("\"huge-sent\"")
        }
        // Wait for the reconnect, then the endless continuation frames.
        try waitConnected(server.port, reconnects: 1)
        endpoint.exchange.send(#"{"cmd":"endless"}"#)
        let endless = try peakGrowth(server.process.pid, baseline: baseline, seconds: 5) { false }
        server.process.stop()
        endpoint.exchange.stop()
        return (baseline, huge, endless)
    }

    // MARK: Helpers

    private func peakGrowth(_ pid: Int, baseline: Int, seconds: Double, done: () -> Bool) throws -> Int {
        let start = MonotonicSeconds.now()
        var peak = baseline
        while MonotonicSeconds.now() - start < seconds {
            peak = max(peak, try IdleBenchmark.residentBytes(pid: pid))
            if done() { break }
            usleep(5_000)
        }
        return max(0, peak - baseline)
    }

    private func percentiles(_ samples: [UInt32]) -> Percentiles {
        var histogram = LatencyHistogram(capacity: samples.count)
        for sample in samples { histogram.record(nanoseconds: UInt64(sample) * 1000) }
        let sorted = histogram.samples.sorted()
        return Percentiles(
            p50: histogram.percentile(0.5, sorted: sorted), p99: histogram.percentile(0.99, sorted: sorted),
            count: sorted.count)
    }

    /// An ingest part's rate, and the CPU each busy thread of the server and the exchange spent per message over
    /// the same time.
    struct IngestRate {
        var perSecond: Double
        /// The exchange's process is "exchange".
        var cpu: CPUPerOperation
    }

    private func messageRate(
        _ server: (process: BenchProcess, port: Int), source: String, exchange: BenchProcess? = nil
    ) throws -> IngestRate {
        let port = server.port
        let serverPID = Int32(server.process.pid)
        let exchangePID = exchange.map { Int32($0.pid) }
        return try runBlocking {
            let client = CoinWatchClient(configuration: .init(host: "127.0.0.1", port: port))
            defer { client.close() }
            func messages() async throws -> UInt64 {
                try await client.healthCheck().feeds.first { $0.name == source }?.messages ?? 0
            }
            func cpu() -> [String: Double] {
                CPUPerOperation.reading(pid: serverPID, processes: exchangePID.map { ["exchange": $0] } ?? [:])
            }
            try await Task.sleep(for: .milliseconds(Int(options.warmup * 1000)))
            let before = try await messages()
            let cpuBefore = cpu()
            let start = MonotonicSeconds.now()
            try await Task.sleep(for: .milliseconds(Int(options.duration * 1000)))
            let after = try await messages()
            let cpuAfter = cpu()
            let count = Int(after - before)
            return IngestRate(
                perSecond: Double(count) / (MonotonicSeconds.now() - start),
                cpu: CPUPerOperation(from: cpuBefore, to: cpuAfter, operations: count))
        }
    }

    private func waitConnected(_ port: Int, reconnects: UInt64 = 0) throws {
        try runBlocking {
            let client = CoinWatchClient(configuration: .init(host: "127.0.0.1", port: port))
            defer { client.close() }
            for _ in 0..<3000 {
                if let source = try await client.healthCheck().feeds.first, source.connected,
                   source.reconnects >= reconnects {
                    return
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw BenchError("the venue did not connect within 30 s")
        }
    }

    private func startServer(work: String, name: String, arguments: [String]) throws -> (process: BenchProcess, port: Int) {
        let process = try BenchProcess(feed.coinwatchd, [
            "--listen", "127.0.0.1:0", "--data", "\(work)/data-\(name)", "--log-level", "info",
            "--feed-max-message-bytes", "\(feed.maxMessageBytes)",
        ] + arguments, outputPath: "\(work)/\(name).log")
        let port = try process.waitFor("coinwatchd (\(name)) listening") { text -> Int? in
            guard let range = text.range(of: "listening on 127.0.0.1:") else { return nil }
            return Int(text[range.upperBound...].prefix { $0.isNumber })
        }
        return (process, port)
    }

    private func startExchange(work: String, certificates: Certificates?) throws -> Endpoint {
        var arguments = [feed.fakeExchange, "--venue", "finnhub", "--heartbeat", "0"]
        if let certificates { arguments += ["--cert", certificates.cert, "--key", certificates.key] }
        let exchange = try BenchProcess(feed.python, arguments, outputPath: "\(work)/exchange-\(UUID().uuidString).log")
        let port = try exchange.waitFor("fake exchange listening") { text -> Int? in
            text.split(separator: "\n").first { $0.hasPrefix("listening ") }.flatMap { Int($0.dropFirst(10)) }
        }
        return Endpoint(exchange: exchange, url: "\(certificates == nil ? "ws" : "wss")://127.0.0.1:\(port)/ws")
    }

    private func liveArguments(_ endpoint: Endpoint, _ certificates: Certificates?) -> [String] {
        var arguments = ["--feed", "finnhub", "--finnhub-token", "bench", "--feed-url", "finnhub=\(endpoint.url)",
                         "--symbols", "BTC"]
        if let certificates { arguments += ["--ca-file", certificates.ca] }
        return arguments
    }

    struct Certificates {
        let ca: String
        let cert: String
        let key: String
    }

    /// A throw-away CA and a `localhost`/`127.0.0.1` server certificate from it, made with `openssl`.
    private func makeCertificates(in directory: String) throws -> Certificates {
        let ca = directory + "/ca.pem", caKey = directory + "/ca.key"
        let cert = directory + "/server.pem", key = directory + "/server.key", request = directory + "/server.csr"
        let extensions = directory + "/server.ext"
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", caKey,
             "-out", ca, "-days", "2", "-subj", "/CN=CoinWatch Bench CA"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request,
             "-subj", "/CN=localhost"],
            ["x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", cert, "-days", "2",
             "-extfile", extensions],
        ]
        for step in steps {
            let process = try BenchProcess(feed.openssl, step, outputPath: directory + "/openssl.log")
            process.process.waitUntilExit()
            guard process.process.terminationStatus == 0 else {
                throw BenchError("openssl \(step.prefix(2).joined(separator: " ")) failed:\n\(process.output)")
            }
        }
        return Certificates(ca: ca, cert: cert, key: key)
    }
}

/// The `feeds` mode's own options.
struct FeedBenchOptions {
    var coinwatchd: String
    var python: String
    var fakeExchange: String
    var openssl = "/usr/bin/openssl"
    var plain: Bool
    var rate: Double
    var maxMessageBytes: Int
    var parts: Set<String>

    init(_ parsed: ParsedArguments, _ options: BenchOptions) throws(UsageError) {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("coinwatchd").path
        coinwatchd = parsed["coinwatchd"] ?? beside
        python = parsed["python"] ?? ".build/venv/bin/python"
        fakeExchange = parsed["fake-exchange"] ?? "scripts/feeds/fake_exchange.py"
        plain = parsed.has("plain")
        rate = options.rate > 0 ? options.rate : 1000
        maxMessageBytes = 1 << 20
        let partsText = parsed["parts"] ?? "ingest,latency,memory"
        parts = Set(partsText.split(separator: ",").map(String.init))
        guard !parts.isEmpty, parts.isSubset(of: ["ingest", "latency", "memory", "read"]) else {
            throw UsageError("--parts: '\(partsText)' is not a list of ingest, latency, memory, read")
        }
        // The in-process part needs neither the server nor the exchange.
        for (flag, path) in [("coinwatchd", coinwatchd), ("python", python), ("fake-exchange", fakeExchange)]
        where parts != ["read"] {
            guard FileManager.default.fileExists(atPath: path) else {
                throw UsageError("--\(flag): '\(path)' does not exist (run from the repository root, after scripts/python-env)")
            }
        }
    }
}

/// The send time carried by a latency-run price `1.<16 digits of microseconds>`, or nil for any other price.
func sentMicroseconds(_ price: V1.Decimal?) -> Int64? {
    guard let price, price.scale <= 16 else { return nil }
    var mantissa = price.mantissa
    for _ in price.scale..<16 {
        let (next, overflow) = mantissa.multipliedReportingOverflow(by: 10)
        guard !overflow else { return nil }
        mantissa = next
    }
    let micros = mantissa - 10_000_000_000_000_000
    return micros > 0 ? micros : nil
}

/// Seconds on the monotonic clock, for the benchmark's own pacing.
enum MonotonicSeconds {
    static func now() -> Double { Double(nowNanos()) / 1e9 }
}
