import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `scripts/mock-apns.py` run for a test: an HTTP/2-over-TLS stand-in for APNs on a free port, with the shared test
/// PKI's server certificate and a provider key pair of its own made with the `openssl` command, controlled through
/// its stdin.
///
/// `coinwatchdArguments` point a coinwatchd at it. The mock's records and counts say what a real APNs would have
/// received: headers, payloads, provider tokens, duplicates by apns-id.
public final class MockAPNs: Sendable {
    public static let keyID = "TESTKEY123"
    public static let teamID = "TESTTEAM99"
    public static let topic = "com.example.coinwatch"

    public let port: Int
    public let files: TemporaryDirectory
    /// The provider key coinwatchd signs with (PKCS#8, as Apple's AuthKey_….p8).
    public let keyFile: String
    /// The CA that signed the mock's certificate, for `--ca-file`.
    public let caFile: String
    /// Where the mock writes one JSON line per request.
    public let recordsFile: String
    private let process: ChildProcess

    public var endpoint: String { "https://127.0.0.1:\(port)" }

    /// The options that make coinwatchd deliver to this mock.
    public var coinwatchdArguments: [String] {
        [
            "--apns-key-file", keyFile, "--apns-key-id", Self.keyID, "--apns-team-id", Self.teamID,
            "--apns-topic", Self.topic, "--apns-endpoint", endpoint, "--ca-file", caFile,
        ]
    }

    /// Starts the mock.
    ///
    /// - Parameters:
    ///   - maxStreams: SETTINGS_MAX_CONCURRENT_STREAMS the mock advertises.
    ///   - minTokenInterval: a provider token replaced sooner than this after the previous one is refused
    ///     (429 TooManyProviderTokenUpdates), as APNs does at 20 minutes.
    ///   - maxTokenAge: a provider token older than this (by its iat) is refused as ExpiredProviderToken; APNs's is
    ///     an hour.
    ///   - verifyWithOtherKey: check tokens against the public half of a different key, so every token is refused
    ///     as InvalidProviderToken.
    public static func start(
        maxStreams: Int = 100, minTokenInterval: Duration = .zero, maxTokenAge: Duration = .seconds(3600),
        verifyWithOtherKey: Bool = false
    ) async throws -> MockAPNs {
        let files = try TemporaryDirectory(prefix: "mock-apns")
        let pki = try await TestCertificates.shared()
        try await TestCertificates.makeProviderKey(named: "provider", in: files)
        try await TestCertificates.makeProviderKey(named: "other", in: files)
        // The first use may build the venv: off the cooperative pool, which the tests beside this one share.
        let python = try await onOwnThread { try PythonEnvironment.python() }
        let records = files.appending("records.jsonl").path
        let (seconds, attoseconds) = minTokenInterval.components
        let process = try ChildProcess(python, [
            PythonEnvironment.repositoryRoot.appendingPathComponent("scripts/mock-apns.py").path,
            "--cert", pki.server.certificateFile, "--key", pki.server.privateKeyFile,
            "--public-key", files.appending(verifyWithOtherKey ? "other.pub.pem" : "provider.pub.pem").path,
            "--key-id", keyID, "--team-id", teamID, "--topic", topic, "--max-streams", "\(maxStreams)",
            "--min-token-interval", "\(Double(seconds) + Double(attoseconds) / 1e18)",
            "--max-token-age", "\(maxTokenAge.components.seconds)", "--records", records,
        ])
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let line = Self.events(in: process.stdout).first(where: { $0["event"] as? String == "listening" }),
               let port = line["port"] as? Int {
                return MockAPNs(
                    port: port, files: files, keyFile: files.appending("provider.p8").path,
                    caFile: pki.caFile, recordsFile: records, process: process)
            }
            if let status = process.exitStatus {
                throw MockAPNsError(message: "the mock APNs exited (\(status)) before listening:\n\(process.stderr)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw MockAPNsError(message: "the mock APNs did not start within a minute:\n\(process.stderr)")
    }

    private init(port: Int, files: TemporaryDirectory, keyFile: String, caFile: String, recordsFile: String,
                 process: ChildProcess) {
        self.port = port
        self.files = files
        self.keyFile = keyFile
        self.caFile = caFile
        self.recordsFile = recordsFile
        self.process = process
    }

    deinit {
        stopAndReap()
    }

    /// Stops the mock, for a `defer`: end of file on its stdin now, and a thread of its own waits for the exit (SIGKILL
    /// if that does not do it), so the test's thread goes back to the task pool at once.
    public func stopInBackground() {
        process.closeInput()
        Thread { self.stopAndReap() }.start()
    }

    /// End of file on the mock's stdin, then waits (blocking) for its exit; SIGKILL if that does not do it.
    private func stopAndReap() {
        process.closeInput()
        if process.wait(timeout: .seconds(10)) == nil {
            process.signal(SIGKILL)
            _ = process.wait(timeout: .seconds(10))
        }
    }

    /// Sends a control command (`drop-after 5`, `hold`, `release`, ...) and waits for the mock to take it.
    public func command(_ line: String) async throws {
        let before = Self.events(in: process.stdout).count { $0["event"] as? String == "ok" }
        process.write(Array((line + "\n").utf8))
        try await waitForEvent { events in events.count { $0["event"] as? String == "ok" } > before }
    }

    /// The mock's counts so far.
    public func summary() async throws -> Summary {
        let before = Self.events(in: process.stdout).count { $0["event"] as? String == "summary" }
        process.write(Array("summary\n".utf8))
        var found: [String: Any] = [:]
        try await waitForEvent { events in
            let summaries = events.filter { $0["event"] as? String == "summary" }
            guard summaries.count > before else { return false }
            found = summaries[before]
            return true
        }
        return try Summary(found)
    }

    /// Every request recorded so far, in the order the mock finished it.
    public func records() throws -> [Record] {
        let text = (try? String(contentsOfFile: recordsFile, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            try JSONDecoder().decode(Record.self, from: Data(line.utf8))
        }
    }

    /// What the mock wrote to stderr (Python errors), for failure messages.
    public var errors: String { process.stderr }

    private func waitForEvent(_ condition: ([[String: Any]]) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if condition(Self.events(in: process.stdout)) { return }
            if let status = process.exitStatus {
                throw MockAPNsError(message: "the mock APNs exited (\(status)):\n\(process.stderr)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw MockAPNsError(message: "the mock APNs did not answer within 30 s:\n\(process.stderr)")
    }

    private static func events(in output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }

    /// The mock's `summary` answer.
    public struct Summary: Sendable {
        /// Requests received (answered or not).
        public var requests: Int
        /// Answers sent, by HTTP status.
        public var byStatus: [Int: Int]
        /// apns-ids answered 200 at least once.
        public var deliveredIDs: Int
        /// 200s beyond the first per apns-id: notifications a phone would have received twice.
        public var duplicateDeliveries: Int
        /// Distinct provider tokens accepted, with the iat of each and how many requests carried it.
        public var tokens: [(iat: Int, requests: Int)]
        /// Most streams open at once on one connection.
        public var maxConcurrentStreams: Int
        /// Connections accepted.
        public var connections: Int
        /// Connections open now.
        public var openConnections: Int
        /// Requests received after their apns-expiration.
        public var sentAfterExpiration: Int
        /// HTTP/2 protocol errors the mock saw.
        public var protocolErrors: Int

        init(_ fields: [String: Any]) throws {
            func int(_ name: String) throws -> Int {
                guard let value = fields[name] as? Int else { throw MockAPNsError(message: "summary lacks \(name)") }
                return value
            }
            requests = try int("requests")
            byStatus = Dictionary(uniqueKeysWithValues: ((fields["by_status"] as? [String: Int]) ?? [:]).compactMap { key, value in
                Int(key).map { ($0, value) }
            })
            deliveredIDs = try int("delivered_ids")
            duplicateDeliveries = try int("duplicate_deliveries")
            tokens = ((fields["tokens"] as? [[String: Any]]) ?? []).map { token in
                ((token["iat"] as? Int) ?? 0, (token["requests"] as? Int) ?? 0)
            }
            maxConcurrentStreams = try int("max_concurrent_streams")
            connections = try int("connections")
            openConnections = try int("open_connections")
            sentAfterExpiration = try int("sent_after_expiration")
            protocolErrors = try int("protocol_errors")
        }
    }

    /// One request as the mock recorded it.
    public struct Record: Decodable, Sendable {
        /// When it arrived, in seconds since the Unix epoch.
        public var time: Double
        public var connection: Int
        public var stream: Int
        public var status: Int
        public var reason: String
        public var apnsID: String
        public var token: String
        public var method: String?
        public var path: String
        public var topic: String?
        public var pushType: String?
        public var priority: String?
        public var expiration: String?
        public var collapseID: String?
        public var contentType: String?
        public var payload: String
        /// A digest of the provider token (the token itself is not recorded).
        public var jwt: String?
        public var jwtIssuedAt: Int?
        public var jwtIssuer: String?

        enum CodingKeys: String, CodingKey {
            case time, connection, stream, status, reason, token, method, path, topic, priority, expiration, payload, jwt
            case apnsID = "apns_id"
            case pushType = "push_type"
            case collapseID = "collapse_id"
            case contentType = "content_type"
            case jwtIssuedAt = "jwt_iat"
            case jwtIssuer = "jwt_iss"
        }
    }
}

public struct MockAPNsError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public var description: String { message }
}
