import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import Foundation
import Synchronization

/// `push` mode: `--devices` devices (default 100,000) registered for push, each with a rule that one price move
/// crosses, and a coinwatchd delivering to the mock APNs (scripts/mock-apns.py) over one HTTP/2 connection.
///
/// Reports the time from the tick to the mock's last 200, pushes per second, and whether any push was lost or
/// duplicated; beside it, in the same run, `h2load` posting as many of the same requests to the same mock over one
/// connection (the mock's own limit); and GetSettings throughput during the burst against without it. The tool
/// starts and stops the mock and coinwatchd itself (coinwatchd from the directory of this executable), with keys
/// and a test CA made by `openssl` in a temporary directory.
struct PushBenchmark {
    let options: BenchOptions

    func run() throws -> Int32 {
        let devices = options.devices
        let root = try Self.repositoryRoot()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("coinwatch-push-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        try Self.makeKeys(in: work)
        // scripts/python-env prints the venv's path last (after what building it said, if it had to).
        let venv = try BenchProcess.run("\(root)/scripts/python-env", [], outputPath: "\(work)/python-env.log")
            .split(separator: "\n").last.map(String.init) ?? ""
        let python = venv.trimmingCharacters(in: .whitespacesAndNewlines) + "/bin/python"

        let mock = try BenchProcess(python, [
            "\(root)/scripts/mock-apns.py", "--cert", "\(work)/server.pem", "--key", "\(work)/server.key",
            "--public-key", "\(work)/provider.pub.pem", "--key-id", Self.keyID, "--team-id", Self.teamID,
            "--topic", Self.topic, "--max-streams", "1000",
        ], outputPath: "\(work)/mock.log")
        defer { mock.stop() }
        let mockPort = try Self.requiredNumber("port", in: mock.waitForLine { $0.contains("\"listening\"") })
        let server = try startServer(mockPort: mockPort, work: work)
        defer { server.stop() }
        let port = try Self.listeningPort(server)
        var serverOptions = options
        serverOptions.host = "127.0.0.1"
        serverOptions.port = port
        print("push: \(devices) devices, coinwatchd on 127.0.0.1:\(port) (\(options.apnsConnections) APNs connection"
            + "\(options.apnsConnections == 1 ? "" : "s")), mock APNs on 127.0.0.1:\(mockPort)")

        let loadStart = Date()
        try prepare(devices: devices, port: port)
        print("  registered    \(devices) devices with a rule in \(Self.seconds(Date().timeIntervalSince(loadStart))) s")

        let quiet = try GetSettingsLoad(options: serverOptions, devices: devices).measure(seconds: options.duration) {}
        let tick = Mutex<Double>(0)
        let busy = try GetSettingsLoad(options: serverOptions, devices: devices).measure(seconds: options.duration) {
            tick.withLock { $0 = Date().timeIntervalSince1970 }
            _ = try? runBlocking { try await Self.publish(port: port, price: 110) }
        }
        let summary = try Self.waitForDeliveries(mock: mock, count: devices, timeout: max(300, Double(devices) / 200))
        let tickTime = tick.withLock { $0 }
        let delivered = Self.number("delivered_ids", in: summary) ?? 0
        let duplicates = Self.number("duplicate_deliveries", in: summary) ?? 0
        let lastOK = Self.decimal("last_ok_time", in: summary) ?? tickTime
        let burst = max(lastOK - tickTime, 1e-9)
        let server200 = try runBlocking {
            let client = CoinWatchClient(configuration: .init(host: "127.0.0.1", port: port))
            defer { client.close() }
            return try await client.healthCheck().push?.delivered ?? 0
        }
        print("  tick → last 200   \(Self.seconds(burst)) s, \(Int((Double(delivered) / burst).rounded())) pushes/s")
        print("  delivered     \(delivered) of \(devices) (coinwatchd counted \(server200)), duplicates \(duplicates)")

        let h2load = try runH2load(mock: mock, mockPort: mockPort, requests: devices, work: work)
        print("  h2load        \(Int(h2load.rounded())) requests/s to the same mock over one connection"
            + " (coinwatchd: \(Self.ratio(Double(delivered) / burst, h2load))× of it)")
        print("  GetSettings   \(Int(quiet.rounded()))/s without the burst, \(Int(busy.rounded()))/s during it"
            + " (\(Self.ratio(busy, quiet))×)")
        if options.json {
            print("{\"mode\":\"push\",\"devices\":\(devices),\"apns_connections\":\(options.apnsConnections),"
                + "\"tick_to_last_200_s\":\(Self.seconds(burst)),\"pushes_per_second\":\(Int((Double(delivered) / burst).rounded())),"
                + "\"delivered\":\(delivered),\"duplicates\":\(duplicates),\"h2load_requests_per_second\":\(Int(h2load.rounded())),"
                + "\"get_settings_quiet_per_second\":\(Int(quiet.rounded())),"
                + "\"get_settings_burst_per_second\":\(Int(busy.rounded()))}")
        }
        return delivered == devices && duplicates == 0 ? 0 : 1
    }

    // MARK: Set-up

    static let keyID = "BENCHKEY01"
    static let teamID = "BENCHTEAM1"
    static let topic = "com.example.coinwatch"

    /// The checkout the tool runs from (for scripts/): the working directory, or above the executable.
    static func repositoryRoot() throws -> String {
        var candidates = [FileManager.default.currentDirectoryPath]
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(directory.path)
            directory.deleteLastPathComponent()
        }
        guard let root = candidates.first(where: { FileManager.default.fileExists(atPath: "\($0)/scripts/mock-apns.py") })
        else { throw BenchError("push mode needs scripts/mock-apns.py: run it from the CoinWatch checkout") }
        return root
    }

    /// A test CA, the mock's certificate for 127.0.0.1, and the provider key pair, made by `openssl`.
    static func makeKeys(in work: String) throws {
        let openssl = "/usr/bin/openssl"
        let log = "\(work)/openssl.log"
        try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(to: URL(fileURLWithPath: "\(work)/server.ext"))
        for arguments in [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
             "\(work)/ca.key", "-out", "\(work)/ca.pem", "-days", "1", "-subj", "/CN=CoinWatch bench CA"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "\(work)/server.key",
             "-out", "\(work)/server.csr", "-subj", "/CN=localhost"],
            ["x509", "-req", "-in", "\(work)/server.csr", "-CA", "\(work)/ca.pem", "-CAkey", "\(work)/ca.key",
             "-CAcreateserial", "-out", "\(work)/server.pem", "-days", "1", "-extfile", "\(work)/server.ext"],
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "\(work)/provider.p8"],
            ["pkey", "-in", "\(work)/provider.p8", "-pubout", "-out", "\(work)/provider.pub.pem"],
        ] {
            _ = try BenchProcess.run(openssl, arguments, outputPath: log)
        }
    }

    /// coinwatchd, from beside this executable, delivering to the mock.
    func startServer(mockPort: Int, work: String) throws -> BenchProcess {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("coinwatchd").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchError("push mode runs coinwatchd from beside coinwatch-bench; \(binary) is not there")
        }
        return try BenchProcess(binary, [
            "--listen", "127.0.0.1:0", "--data", "\(work)/data", "--feed", "none",
            "--apns-key-file", "\(work)/provider.p8", "--apns-key-id", Self.keyID, "--apns-team-id", Self.teamID,
            "--apns-topic", Self.topic, "--apns-endpoint", "https://127.0.0.1:\(mockPort)", "--ca-file", "\(work)/ca.pem",
            "--apns-connections", "\(options.apnsConnections)",
        ], outputPath: "\(work)/coinwatchd.log")
    }

    /// The port in coinwatchd's `listening on 127.0.0.1:PORT` line.
    static func listeningPort(_ server: BenchProcess) throws -> Int {
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let log = server.output
            if let range = log.range(of: "listening on 127.0.0.1:") {
                let digits = log[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits) { return port }
            }
            guard server.process.isRunning else { throw BenchError("coinwatchd exited: \(log)") }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw BenchError("coinwatchd did not start: \(server.output.suffix(2000))")
    }

    /// Registers every device with a rule above 100 on BTC, then sets BTC at 90 so every rule is armed.
    func prepare(devices: Int, port: Int) throws {
        try runBlocking {
            let client = CoinWatchClient(configuration: .init(host: "127.0.0.1", port: port))
            defer { client.close() }
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                let lanes = 128
                for lane in 0..<lanes {
                    tasks.addTask {
                        for index in stride(from: lane, to: devices, by: lanes) {
                            _ = try await client.registerDevice(device: "push-\(index)", apnsToken: Self.token(index))
                            _ = try await client.setRule(device: "push-\(index)", symbol: "BTC", below: nil, above: ExactDecimal(100))
                        }
                    }
                }
                try await tasks.waitForAll()
            }
        }
        try runBlocking { try await Self.publish(port: port, price: 90) }
    }

    static func token(_ index: Int) -> String {
        let tail = String(index, radix: 16)
        return "be" + String(repeating: "0", count: 62 - tail.count) + tail
    }

    static func publish(port: Int, price: Int64) async throws {
        let client = CoinWatchClient(configuration: .init(host: "127.0.0.1", port: port))
        defer { client.close() }
        try await client.publish([V1.Tick(symbol: "BTC", price: V1.Decimal(ExactDecimal(price)))])
    }

    // MARK: The mock

    /// Sends `command` to the mock and returns its answer line.
    static func command(_ mock: BenchProcess, _ command: String, answer event: String = "ok") throws -> String {
        let before = mock.lines.count
        mock.send(command)
        return try mock.waitForLine(after: before) { $0.contains("\"event\": \"\(event)\"") }
    }

    /// Polls the mock until it accepted `count` distinct apns-ids (or `timeout` seconds pass); its last summary.
    static func waitForDeliveries(mock: BenchProcess, count: Int, timeout: Double) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var summary = try command(mock, "summary", answer: "summary")
        while (number("delivered_ids", in: summary) ?? 0) < count && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            summary = try command(mock, "summary", answer: "summary")
        }
        return summary
    }

    /// h2load posting `requests` requests like coinwatchd's (same headers, token and size of payload) to the mock
    /// over one connection with as many streams as the mock allows; its requests per second.
    func runH2load(mock: BenchProcess, mockPort: Int, requests: Int, work: String) throws -> Double {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/h2load") else {
            print("  h2load        not installed (Debian's nghttp2-client); skipped")
            return 0
        }
        let jwt = Self.string("jwt", in: try Self.command(mock, "token", answer: "token")) ?? ""
        _ = try Self.command(mock, "reset")
        let payload = #"{"aps":{"alert":{"title":"BTC above 100","body":"BTC rose above 100 — now 110"},"sound":"default","#
            + #""thread-id":"BTC","category":"PRICE_ALERT"},"alert_id":"3f2504e0-4f89-11d3-9a0c-0305e82c3301","#
            + #""device":"push-0","symbol":"BTC","direction":"above","threshold":"100","price":"110"}"#
        try Data(payload.utf8).write(to: URL(fileURLWithPath: "\(work)/payload.json"))
        let output = try BenchProcess.run("/usr/bin/h2load", [
            "-n", "\(requests)", "-c", "1", "-t", "1", "-m", "1000", "-d", "\(work)/payload.json",
            "-H", "authorization: bearer \(jwt)", "-H", "apns-topic: \(Self.topic)", "-H", "apns-push-type: alert",
            "-H", "apns-priority: 10", "-H", "apns-expiration: 0", "-H", "apns-collapse-id: push-0:BTC",
            "-H", "apns-id: 3f2504e0-4f89-11d3-9a0c-0305e82c3301", "-H", "content-type: application/json",
            "https://127.0.0.1:\(mockPort)/3/device/\(Self.token(0))",
        ], outputPath: "\(work)/h2load.log")
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }),
              let rate = line.split(separator: ",").dropFirst().first?.split(separator: " ").first.flatMap({ Double($0) })
        else { throw BenchError("h2load's output has no rate:\n\(output)") }
        if let statuses = output.split(separator: "\n").first(where: { $0.hasPrefix("status codes:") }),
           !statuses.contains("\(requests) 2xx") {
            print("  h2load        answers were not all 200: \(statuses)")
        }
        return rate
    }

    // MARK: Reading JSON lines and printing

    static func field(_ name: String, in line: String) -> Any? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?[name]
    }

    static func number(_ name: String, in line: String) -> Int? { field(name, in: line) as? Int }

    static func requiredNumber(_ name: String, in line: String) throws -> Int {
        guard let value = number(name, in: line) else { throw BenchError("no \(name) in \(line)") }
        return value
    }

    static func decimal(_ name: String, in line: String) -> Double? { field(name, in: line) as? Double }

    static func string(_ name: String, in line: String) -> String? { field(name, in: line) as? String }

    static func seconds(_ value: Double) -> String { String(format: "%.3f", value) }

    static func ratio(_ value: Double, _ base: Double) -> String { base > 0 ? String(format: "%.2f", value / base) : "-" }
}

/// Closed-loop GetSettings over raw connections, counted over one window.
struct GetSettingsLoad {
    let options: BenchOptions
    let devices: Int

    /// GetSettings answered per second over `seconds`, after a half-second warm-up; `atStart` runs as the window
    /// opens.
    func measure(seconds: Double, atStart: @escaping @Sendable () -> Void) throws -> Double {
        let group = try EventLoopGroup(threads: options.threads, namePrefix: "bench")
        defer { group.syncShutdownGracefully() }
        var unary = options
        unary.method = "get"
        unary.devices = min(devices, 10_000)
        let payloads = (0..<unary.devices).map { V1.GetSettingsRequest(deviceID: "push-\($0)").serializedBytes() }
        let phase = Phase()
        let drivers = try UnaryBenchmark(options: unary).connectRawDrivers(
            group: group, method: V1.CoinWatch.getSettings.path, payloads: payloads, phase: phase)
        for driver in drivers {
            _ = driver.eventLoop.execute { driver.start() }
        }
        sleepSeconds(0.5)
        phase.set(.measuring)
        let start = nowNanos()
        atStart()
        sleepSeconds(seconds)
        phase.set(.stopping)
        let elapsed = Double(nowNanos() - start) / 1e9
        var completed = 0
        for driver in drivers {
            let (samples, _, _) = try runBlocking {
                await withCheckedContinuation { continuation in
                    _ = driver.eventLoop.execute { continuation.resume(returning: driver.collect()) }
                }
            }
            completed += samples.count
        }
        for driver in drivers {
            _ = driver.eventLoop.execute { driver.close() }
        }
        return Double(completed) / max(elapsed, 1e-9)
    }
}
