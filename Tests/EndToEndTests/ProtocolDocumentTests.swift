import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

/// docs/PROTOCOL.md lists every message a client can provoke in its appendix, one row per situation. Each row is
/// provoked here from a real coinwatchd (or, for the shutdown rows that need a call that waits on demand, the same
/// runtime in process) and its frame, code and text compared with the page byte for byte. A row without a situation here, or a
/// situation without its row, fails as well, and so does a message the page's example session quotes that the table
/// does not have.
@Suite("docs/PROTOCOL.md matches the server", .timeLimit(.minutes(5)))
struct ProtocolDocumentTests {
    /// What the server answered (or what a row of the table says it answers).
    struct Answer: Hashable, CustomStringConvertible {
        var frame: String
        var code: String
        var message: String

        var description: String { "\(frame) \(code) \"\(message)\"" }
    }

    static let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md")

    /// The appendix's rows by id: `| `id` | situation | Frame | `CODE` | `message` |`.
    static func rows() throws -> [String: Answer] {
        let text = try String(contentsOf: page, encoding: .utf8)
        let appendix = try #require(text.range(of: "## Appendix: every message the server sends"), "no appendix")
        var rows: [String: Answer] = [:]
        for line in text[appendix.upperBound...].split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            try #require(cells.count == 5, "a row with \(cells.count) cells: \(line)")
            func unquoted(_ cell: String) -> String {
                cell.hasPrefix("`") && cell.hasSuffix("`") && cell.count >= 2 ? String(cell.dropFirst().dropLast()) : cell
            }
            let id = unquoted(cells[0])
            try #require(rows[id] == nil, "row \(id) twice")
            rows[id] = Answer(frame: unquoted(cells[2]), code: unquoted(cells[3]), message: unquoted(cells[4]))
        }
        return rows
    }

    /// The status and error messages quoted in the page's example session (`message: "…"`, `reason: "…"`).
    static func sessionMessages() throws -> [String] {
        let text = try String(contentsOf: page, encoding: .utf8)
        let session = try #require(text.range(of: "## 10. A session on the wire"))
        let end = text.range(of: "## Appendix", range: session.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
        var messages: [String] = []
        for key in ["message: \"", "reason: \""] {
            var rest = text[session.upperBound..<end]
            while let start = rest.range(of: key) {
                let quoted = rest[start.upperBound...]
                guard let close = quoted.firstIndex(of: "\"") else { break }
                messages.append(String(quoted[..<close]))
                rest = quoted[close...]
            }
        }
        return messages
    }

    @Test("every message the page quotes is what the server sends")
    func everyQuotedMessage() async throws {
        let rows = try Self.rows()
        #expect(rows.count >= 40, "the appendix lost rows: \(rows.count)")
        var answers: [String: Answer] = [:]

        // One plain server for most rows; servers with the flags a row names for the rest.
        let plain = try await ServerProcess.start()
        defer { plain.stopInBackground() }
        answers.merge(try await Self.framing(plain.port)) { $1 }
        answers.merge(try await Self.calls(plain.port)) { $1 }
        answers.merge(try await Self.values(plain.port)) { $1 }

        let handshake = try await ServerProcess.start(arguments: ["--handshake-timeout", "2s"])
        defer { handshake.stopInBackground() }
        answers["no-hello"] = try await Session(handshake.port, hello: false).next(where: Self.isConnectionError)

        let idle = try await ServerProcess.start(arguments: ["--idle-timeout", "2s"])
        defer { idle.stopInBackground() }
        let silent = try Session(idle.port)
        silent.send(Self.call(1, V1.CoinWatch.streamPrices.path, V1.StreamPricesRequest()))
        answers["idle"] = try await silent.next(where: Self.isGoAway)
        answers["idle-call"] = try await silent.end(1)

        let single = try await ServerProcess.start(arguments: ["--max-connections", "1"])
        defer { single.stopInBackground() }
        let first = try Session(single.port)
        _ = try await first.next(where: Self.isWelcome)
        answers["connections"] = try await Session(single.port).next(where: Self.isConnectionError)
        first.close()

        let guarded = try await ServerProcess.start(arguments: ["--max-calls", "1", "--publish-token", "s3cret"])
        defer { guarded.stopInBackground() }
        answers.merge(try await Self.limits(guarded.port)) { $1 }

        let stopping = try await ServerProcess.start()
        answers.merge(try await Self.shutdown(stopping)) { $1 }
        await stopping.stop()

        answers.merge(try await Self.draining()) { $1 }

        let authorised = try await ServerProcess.start(arguments: ["--auth", "required"])
        defer { authorised.stopInBackground() }
        answers.merge(try await Self.authorisation(authorised.port)) { $1 }

        let pki = try await TestCertificates.shared()
        let tlsOnly = try await ServerProcess.start(arguments: [
            "--tls-cert", pki.server.certificateFile, "--tls-key", pki.server.privateKeyFile,
        ])
        defer { tlsOnly.stopInBackground() }
        answers["tls-only"] = try await Session(tlsOnly.port).next(where: Self.isConnectionError)

        for (id, expected) in rows.sorted(by: { $0.key < $1.key }) {
            let answer = try #require(answers[id], "row \(id) of docs/PROTOCOL.md has no situation in this test")
            #expect(answer == expected, "row \(id): the server sends \(answer); the page says \(expected)")
        }
        let untested = Set(answers.keys).subtracting(rows.keys)
        #expect(untested.isEmpty, "situations without a row in docs/PROTOCOL.md: \(untested.sorted())")
        let documented = Set(rows.values.map(\.message))
        for message in try Self.sessionMessages() {
            #expect(documented.contains(message), "the example session quotes \"\(message)\", which the appendix lacks")
        }
    }

    // MARK: Situations

    /// Framing and handshake errors, each on its own connection.
    static func framing(_ port: Int) async throws -> [String: Answer] {
        var answers: [String: Answer] = [:]
        func error(_ bytes: [UInt8], hello: Bool = false) async throws -> Answer {
            let session = try Session(port, hello: hello)
            session.send(bytes)
            return try await session.next(where: isConnectionError)
        }
        answers["zero-length"] = try await error([0, 0, 0, 0])
        answers["too-large"] = try await error([0x00, 0x4C, 0x4B, 0x40] + [UInt8](repeating: 0, count: 16))
        answers["not-a-frame"] = try await error([0, 0, 0, 3, 0xFF, 0xFF, 0xFF])
        answers["call-first"] = try await error(frame(.call(V1.Call(callID: 1, method: "x"))))
        // Field 15, a varint: a kind this version does not have.
        answers["unknown-first"] = try await error([0, 0, 0, 2, 0x78, 0x01])
        answers["version"] = try await error(frame(.hello(V1.Hello(protocolVersion: 7))))
        answers["second-hello"] = try await error(frame(.hello(V1.Hello(protocolVersion: 1))), hello: true)
        answers["server-frame"] = try await error(frame(.welcome(V1.Welcome(protocolVersion: 1))), hello: true)
        answers["long-ping"] = try await error(frame(.ping(V1.Ping(payload: [UInt8](repeating: 7, count: 65)))), hello: true)
        answers["reused-id"] = try await error(
            call(7, V1.CoinWatch.streamPrices.path, V1.StreamPricesRequest())
                + call(7, V1.Health.check.path, V1.HealthCheckRequest()), hello: true)
        // After the handshake a frame of an unknown kind is ignored: the next call is answered.
        let ignoring = try Session(port)
        ignoring.send([0, 0, 0, 2, 0x78, 0x01] + call(1, V1.Health.check.path, V1.HealthCheckRequest()))
        #expect(try await ignoring.end(1).code == "OK", "a frame of an unknown kind after Hello is ignored")

        // HTTP on the same port is served as HTTP (docs/ARCHITECTURE.md, "One port, three ways in"): a request the
        // parser refuses gets its status and a one-line text body.
        let http = try RawClient(port: port)
        http.send(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        let reply = String(decoding: await http.readToEnd(), as: UTF8.self)
        let parts = reply.split(separator: "\r\n\r\n", maxSplits: 1, omittingEmptySubsequences: false)
        let status = parts.first?.split(separator: "\r\n").first.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
        #expect(parts.count == 2 && reply.hasSuffix("\n"))
        answers["http"] = Answer(frame: status ?? "", code: "—", message: String((parts.last ?? "").dropLast()))

        // A flood: however slowly the server reads them, 200 pings drain a budget that refills at one a second.
        let flood = try Session(port)
        flood.send((0..<200).flatMap { frame(.ping(V1.Ping(payload: [UInt8(truncatingIfNeeded: $0)]))) })
        answers["ping-flood"] = try await flood.next(where: isGoAway)
        return answers
    }

    /// Call errors of the runtime.
    static func calls(_ port: Int) async throws -> [String: Answer] {
        var answers: [String: Answer] = [:]
        let session = try Session(port)
        session.send(call(0, V1.Health.check.path, V1.HealthCheckRequest()))
        answers["call-id-0"] = try await session.end(0)
        session.send(call(1, "coinwatch.v1.Nope/Nothing", V1.HealthCheckRequest()))
        answers["unknown-method"] = try await session.end(1)
        session.send(call(2, V1.Health.check.path, V1.HealthCheckRequest(), metadata: ["Authorization": "Bearer x"]))
        answers["metadata-case"] = try await session.end(2)
        session.send(call(3, V1.CoinWatch.getSettings.path, payload: [0x0A, 0x05, 0x41]))
        answers["bad-payload"] = try await session.end(3)
        session.send(call(4, V1.CoinWatch.streamPrices.path, V1.StreamPricesRequest(), timeoutMs: 200))
        answers["deadline"] = try await session.end(4)
        session.send(call(5, V1.CoinWatch.streamPrices.path, V1.StreamPricesRequest()) + frame(.cancel(V1.Cancel(callID: 5))))
        answers["cancel"] = try await session.end(5)
        session.send(call(6, V1.Health.check.path, V1.HealthCheckRequest(service: "coinwatch.v1.Nope")))
        answers["health-service"] = try await session.end(6)
        let halfClosed = try Session(port)
        // The Health answer shows the server has read the stream's Call before it: the stream is live.
        halfClosed.send(call(1, V1.CoinWatch.streamPrices.path, V1.StreamPricesRequest())
            + call(2, V1.Health.check.path, V1.HealthCheckRequest()))
        #expect(try await halfClosed.end(2).code == "OK")
        halfClosed.shutdownWrite()
        answers["half-close"] = try await halfClosed.end(1)
        return answers
    }

    /// The service's rules for the values in requests.
    static func values(_ port: Int) async throws -> [String: Answer] {
        var answers: [String: Answer] = [:]
        let session = try Session(port)
        var id: UInt64 = 0
        func answer<Request: WireMessage>(_ method: String, _ request: Request) async throws -> Answer {
            id += 1
            session.send(call(id, method, request))
            return try await session.end(id)
        }
        func save(_ build: (inout V1.SaveSettingsRequest) -> Void) async throws -> Answer {
            var request = V1.SaveSettingsRequest(deviceID: "phone-1")
            build(&request)
            return try await answer(V1.CoinWatch.saveSettings.path, request)
        }
        func rule(below: Int64? = nil, above: Int64? = nil, scale: UInt32 = 0) -> V1.AlertRule {
            V1.AlertRule(below: below.map { V1.Decimal(mantissa: $0, scale: scale) },
                         above: above.map { V1.Decimal(mantissa: $0, scale: scale) })
        }
        func publish(_ tick: V1.Tick) async throws -> Answer {
            try await answer(V1.CoinWatch.publishPrices.path, V1.PublishPricesRequest(ticks: [tick]))
        }

        answers["not-found"] = try await answer(V1.CoinWatch.getSettings.path, V1.GetSettingsRequest(deviceID: "phone-1"))
        answers["device-id"] = try await answer(V1.CoinWatch.getSettings.path, V1.GetSettingsRequest(deviceID: "phone 1"))
        answers["device-id-empty"] = try await answer(V1.CoinWatch.getSettings.path, V1.GetSettingsRequest(deviceID: ""))
        answers["version-missing"] = try await save {
            $0.setRules["BTC"] = rule(below: 1)
            $0.precondition = .expectedVersion(3)
        }
        answers["symbol"] = try await save { $0.setRules["B"] = rule(below: 1) }
        answers["negative"] = try await save { $0.setRules["BTC"] = rule(below: -1) }
        answers["scale"] = try await save { $0.setRules["BTC"] = V1.AlertRule(above: V1.Decimal(mantissa: 1, scale: 19)) }
        answers["below-above"] = try await save { $0.setRules["BTC"] = rule(below: 70000, above: 60000) }
        answers["same-symbol"] = try await save {
            $0.setRules["btc"] = rule(below: 1)
            $0.setRules["BTC"] = rule(below: 2)
        }
        answers["set-and-remove"] = try await save {
            $0.setRules["BTC"] = rule(below: 1)
            $0.removeSymbols = ["BTC"]
        }
        #expect(try await save { $0.setRules["BTC"] = rule(below: 1) }.code == "OK")
        answers["version-mismatch"] = try await save {
            $0.setRules["BTC"] = rule(below: 2)
            $0.precondition = .expectedVersion(3)
        }
        // A warning rides on a successful answer.
        id += 1
        var unpriced = V1.SaveSettingsRequest(deviceID: "phone-2")
        unpriced.setRules["NOTACOIN"] = rule(above: 1)
        session.send(call(id, V1.CoinWatch.saveSettings.path, unpriced))
        let end = try await session.endFrame(id)
        #expect(end.status == nil, "the save succeeds")
        let response = try V1.SaveSettingsResponse(serializedBytes: end.payload)
        #expect(response.settings?.rules.keys.sorted() == ["NOTACOIN"])
        #expect(response.warnings.count == 1)
        answers["unpriced"] = Answer(frame: "SaveSettingsResponse.warnings", code: "OK", message: response.warnings.first ?? "")

        func symbols(_ prefix: String, _ count: Int) -> [String] {
            (0..<count).map { prefix + String(repeating: "0", count: 4 - String($0).count) + String($0) }
        }
        answers["device-symbols"] = try await save { request in
            for symbol in symbols("S", 65) { request.setRules[symbol] = rule(below: 1) }
        }
        id += 1
        var full = V1.SaveSettingsRequest(deviceID: "phone-3")
        for symbol in symbols("S", 64) { full.setRules[symbol] = rule(below: 1) }
        session.send(call(id, V1.CoinWatch.saveSettings.path, full))
        #expect(try await session.end(id).code == "OK")
        id += 1
        var more = V1.SaveSettingsRequest(deviceID: "phone-3")
        more.setRules["T0000"] = rule(below: 1)
        session.send(call(id, V1.CoinWatch.saveSettings.path, more))
        answers["device-symbols-after"] = try await session.end(id)

        answers["price-zero"] = try await publish(V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: 0)))
        answers["price-missing"] = try await publish(V1.Tick(symbol: "BTC"))
        answers["time-negative"] = try await publish(V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: 1), timeMs: -5))
        answers["interval"] = try await answer(V1.CoinWatch.streamPrices.path, V1.StreamPricesRequest(minIntervalMs: 60001))
        answers["stream-symbol"] = try await answer(V1.CoinWatch.streamPrices.path, V1.StreamPricesRequest(symbols: ["x"]))
        answers["too-many-symbols"] = try await answer(
            V1.CoinWatch.getPrices.path, V1.GetPricesRequest(symbols: symbols("P", 257)))
        let one = V1.Decimal(mantissa: 1)
        answers["too-many-ticks"] = try await answer(V1.CoinWatch.publishPrices.path, V1.PublishPricesRequest(
            ticks: Array(repeating: V1.Tick(symbol: "BTC", price: one), count: 10_001)))
        // Last: no tick on this server was applied before, so the hub knows no symbol yet.
        answers["hub-symbols"] = try await answer(V1.CoinWatch.publishPrices.path, V1.PublishPricesRequest(
            ticks: symbols("H", 4097).map { V1.Tick(symbol: $0, price: one) }))
        return answers
    }

    /// Rows that need `--max-calls 1 --publish-token s3cret`.
    static func limits(_ port: Int) async throws -> [String: Answer] {
        var answers: [String: Answer] = [:]
        let session = try Session(port)
        session.send(call(1, V1.CoinWatch.streamPrices.path, V1.StreamPricesRequest())
            + call(2, V1.Health.check.path, V1.HealthCheckRequest()))
        answers["too-many-calls"] = try await session.end(2)
        let publisher = try Session(port)
        let tick = V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: 1))
        publisher.send(call(1, V1.CoinWatch.publishPrices.path, V1.PublishPricesRequest(ticks: [tick])))
        answers["unauthenticated"] = try await publisher.end(1)
        return answers
    }

    /// Authorisation (`--auth required`) and the device methods: each call on one connection with no credential of
    /// its own, so each carries its credential (or none) in its metadata.
    static func authorisation(_ port: Int) async throws -> [String: Answer] {
        var answers: [String: Answer] = [:]
        let session = try Session(port)
        func bearer(_ token: String) -> [String: String] { ["authorization": "Bearer " + token] }
        session.send(call(1, V1.Admin.listKeys.path, V1.ListKeysRequest()))
        answers["no-credential"] = try await session.end(1)
        session.send(call(2, V1.Admin.listKeys.path, V1.ListKeysRequest(), metadata: ["authorization": "Basic YTpi"]))
        answers["not-bearer"] = try await session.end(2)
        // A device's first save claims it: the answer carries its secret.
        let rule = V1.AlertRule(below: V1.Decimal(mantissa: 60_000))
        session.send(call(3, V1.CoinWatch.saveSettings.path, V1.SaveSettingsRequest(deviceID: "phone-1", setRules: ["BTC": rule])))
        let secret = try await V1.SaveSettingsResponse(serializedBytes: session.endFrame(3).payload).deviceSecret
        #expect(secret.hasPrefix("cwd_"))
        session.send(call(4, V1.CoinWatch.getSettings.path, V1.GetSettingsRequest(deviceID: "phone-2"), metadata: bearer(secret)))
        answers["other-device"] = try await session.end(4)
        session.send(call(5, V1.Admin.listKeys.path, V1.ListKeysRequest(), metadata: bearer(secret)))
        answers["secret-for-admin"] = try await session.end(5)
        // `cwd_<secret>_<device>`: the first character of the secret part changed, the device kept.
        let secretStart = secret.index(secret.startIndex, offsetBy: 4)
        let wrong = secret.replacingCharacters(
            in: secretStart...secretStart, with: secret[secretStart] == "A" ? "B" : "A")
        session.send(call(6, V1.CoinWatch.getSettings.path, V1.GetSettingsRequest(deviceID: "phone-1"), metadata: bearer(wrong)))
        answers["wrong-secret"] = try await session.end(6)
        session.send(call(7, V1.CoinWatch.getDevice.path, V1.GetDeviceRequest(deviceID: "phone-1"), metadata: bearer(secret)))
        answers["not-registered"] = try await session.end(7)
        return answers
    }

    /// SIGTERM with a stream open: the connection's GoAway and the stream's End.
    static func shutdown(_ server: ServerProcess) async throws -> [String: Answer] {
        let session = try Session(server.port)
        // The Health answer shows the server has read the stream's Call before it: the stream is live.
        session.send(call(1, V1.CoinWatch.streamPrices.path, V1.StreamPricesRequest())
            + call(2, V1.Health.check.path, V1.HealthCheckRequest()))
        #expect(try await session.end(2).code == "OK")
        server.terminate()
        return ["shutdown": try await session.next(where: isGoAway), "shutdown-stream": try await session.end(1)]
    }

    /// Shutdown rows that need a call that waits until the test lets it finish, which the service has no method for:
    /// the same runtime in process, with one. A call after `GoAway` is refused while an accepted one still runs, a
    /// connection that has not sent `Hello` is told the server is going, and a call still running when the grace
    /// period ends is ended for it.
    static func draining() async throws -> [String: Answer] {
        var answers: [String: Answer] = [:]
        let held = Mutex<[UnaryResponder<V1.HealthCheckResponse>]>([])
        func server(grace: Duration) throws -> (RPCServer, Int) {
            var configuration = RPCServer.Configuration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.eventLoopThreads = 1
            configuration.shutdownGracePeriod = grace
            let server = try RPCServer(configuration: configuration, methods: [
                .unary(V1.Health.check, deferred: { _, _, responder in held.withLock { $0.append(responder) } }),
            ])
            return (server, try server.start())
        }
        func until(_ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while !condition() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        }

        let (patient, port) = try server(grace: .seconds(600))
        let session = try Session(port)
        session.send(call(1, V1.Health.check.path, V1.HealthCheckRequest()))
        try await until { held.withLock { $0.count == 1 } }
        let waiting = try Session(port, hello: false)
        try await until { patient.stats.openConnections == 2 }
        let shutdown = Task { await patient.shutdownGracefully() }
        // The reads below block their thread; on a busy machine they could hold the pool the shutdown task needs
        // until the handshake timeout answers instead. Wait for the shutdown to have begun first.
        try await until { patient.isShuttingDown }
        answers["shutdown-before-hello"] = try await waiting.next(where: isConnectionError)
        _ = try await session.next(where: isGoAway)
        session.send(call(2, V1.Health.check.path, V1.HealthCheckRequest()))
        answers["draining"] = try await session.end(2)
        held.withLock { $0 }.first?.succeed(V1.HealthCheckResponse(status: .serving))
        #expect(try await session.end(1).code == "OK", "the accepted call still finishes")
        await shutdown.value

        let (hasty, hastyPort) = try server(grace: .seconds(1))
        let late = try Session(hastyPort)
        late.send(call(1, V1.Health.check.path, V1.HealthCheckRequest()))
        try await until { held.withLock { $0.count == 2 } }
        await hasty.shutdownGracefully()
        answers["grace-over"] = try await late.end(1)
        // The held responders keep their calls, and so the servers whose methods hold this list: let them go.
        held.withLock { $0.removeAll() }
        return answers
    }

    // MARK: Frames

    static func frame(_ kind: V1.Frame.Kind) -> [UInt8] {
        FrameEncoder.frame(V1.Frame(kind: kind).serializedBytes())
    }

    static func call<Request: WireMessage>(
        _ id: UInt64, _ method: String, _ request: Request, timeoutMs: UInt64 = 0, metadata: [String: String] = [:]
    ) -> [UInt8] {
        call(id, method, payload: request.serializedBytes(), timeoutMs: timeoutMs, metadata: metadata)
    }

    static func call(
        _ id: UInt64, _ method: String, payload: [UInt8], timeoutMs: UInt64 = 0, metadata: [String: String] = [:]
    ) -> [UInt8] {
        frame(.call(V1.Call(callID: id, method: method, timeoutMs: timeoutMs, metadata: metadata, payload: payload)))
    }

    static func isConnectionError(_ frame: V1.Frame) -> Answer? {
        guard case .error(let error) = frame.kind else { return nil }
        return Answer(frame: "ConnectionError", code: "\(RPCError.Code(rawValue: error.code.rawValue))", message: error.message)
    }

    static func isGoAway(_ frame: V1.Frame) -> Answer? {
        guard case .goAway(let goAway) = frame.kind else { return nil }
        return Answer(frame: "GoAway", code: "\(RPCError.Code(rawValue: goAway.code.rawValue))", message: goAway.reason)
    }

    static func isWelcome(_ frame: V1.Frame) -> Answer? {
        guard case .welcome = frame.kind else { return nil }
        return Answer(frame: "Welcome", code: "OK", message: "")
    }

    /// A raw connection that reads frames as they come; every wait is bounded by the socket's 10 s timeout.
    final class Session {
        let client: RawClient
        private var buffer: [UInt8] = []

        init(_ port: Int, hello: Bool = true) throws {
            client = try RawClient(port: port)
            if hello { client.send(ProtocolDocumentTests.frame(.hello(V1.Hello(protocolVersion: 1, clientName: "doc-test")))) }
        }

        func send(_ bytes: [UInt8]) { client.send(bytes) }

        func shutdownWrite() { client.shutdownWrite() }

        func close() { client.close() }

        /// The next frame `match` accepts, skipping others; fails when the server closes or falls silent first.
        func next(where match: (V1.Frame) -> Answer?) async throws -> Answer {
            while true {
                while buffer.count >= 4 {
                    let length = Int(buffer[0]) << 24 | Int(buffer[1]) << 16 | Int(buffer[2]) << 8 | Int(buffer[3])
                    guard buffer.count >= 4 + length else { break }
                    let frame = try V1.Frame(serializedBytes: Array(buffer[4..<(4 + length)]))
                    buffer.removeFirst(4 + length)
                    if let answer = match(frame) { return answer }
                }
                let chunk = await client.readSome()
                try #require(!chunk.isEmpty, "the server closed the connection (or sent nothing for 10 s) first")
                buffer += chunk
            }
        }

        /// The `End` of call `id`.
        func endFrame(_ id: UInt64) async throws -> V1.End {
            var found: V1.End?
            _ = try await next { frame in
                guard case .end(let end) = frame.kind, end.callID == id else { return nil }
                found = end
                return Answer(frame: "End", code: "", message: "")
            }
            return try #require(found)
        }

        /// The `End` of call `id` as an answer.
        func end(_ id: UInt64) async throws -> Answer {
            let end = try await endFrame(id)
            let code = end.status.map { "\(RPCError.Code(rawValue: $0.code.rawValue))" } ?? "OK"
            return Answer(frame: "End", code: code, message: end.status?.message ?? "")
        }
    }
}
