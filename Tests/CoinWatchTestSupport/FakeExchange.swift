import Foundation
import Synchronization

/// A fake exchange for one venue (scripts/feeds/fake_exchange.py, run with the test venv's `websockets`), on a
/// free loopback port; ws://, or wss:// with a certificate the test made. The test steers it with commands and
/// reads what clients did from its event lines. Stopped when the value goes away.
public final class FakeExchange: Sendable {
    public let venue: String
    public let port: Int
    public let isSecure: Bool
    private let process: ChildProcess

    /// Starts the exchange on a thread of its own: making the venv on first use and waiting for the script's port
    /// are blocking work the cooperative pool's threads, shared by every test, must not wait on. `options` are
    /// extra command-line flags (`--heartbeat 0.2`, `--reject 429`, …).
    public static func start(
        venue: String, certificate: (cert: String, key: String)? = nil, options: [String] = []
    ) async throws -> FakeExchange {
        try await onOwnThread { try FakeExchange(venue: venue, certificate: certificate, options: options) }
    }

    private init(venue: String, certificate: (cert: String, key: String)?, options: [String]) throws {
        let python: String
        do {
            python = try PythonEnvironment.python()
        } catch {
            throw ServerProcessError(message: "no Python test environment: \(error)")
        }
        self.venue = venue
        isSecure = certificate != nil
        var arguments = [
            PythonEnvironment.repositoryRoot.appendingPathComponent("scripts/feeds/fake_exchange.py").path,
            "--venue", venue,
        ]
        if let certificate {
            arguments += ["--cert", certificate.cert, "--key", certificate.key]
        }
        process = try ChildProcess(python, arguments + options)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        var port: Int?
        while port == nil && clock.now < deadline && process.exitStatus == nil {
            port = process.stdout.split(separator: "\n").first { $0.hasPrefix("listening ") }
                .flatMap { Int($0.dropFirst("listening ".count)) }
            if port == nil { usleep(5_000) }
        }
        guard let port else {
            throw ServerProcessError(message: "fake \(venue) exchange did not start: \(process.stderr.suffix(2000))")
        }
        self.port = port
    }

    deinit {
        send(["cmd": "quit"])
        process.closeInput()
    }

    /// `ws://127.0.0.1:PORT/` (or wss://), with `path`.
    public func url(path: String = "/") -> String {
        "\(isSecure ? "wss" : "ws")://127.0.0.1:\(port)\(path)"
    }

    /// Sends one command (see the script's usage).
    public func send(_ command: [String: any Sendable]) {
        guard let data = try? JSONSerialization.data(withJSONObject: command) else { return }
        process.write(Array(data) + [0x0A])
    }

    public func trade(_ symbol: String, _ price: String) {
        send(["cmd": "trade", "symbol": symbol, "price": price])
    }

    /// Every event line so far, decoded.
    public var events: [[String: Any]] {
        process.stdout.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{"), let data = line.data(using: .utf8) else { return nil }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }
    }

    /// The text messages clients sent (their subscriptions), in order.
    public var messages: [String] {
        events.filter { $0["event"] as? String == "message" }.compactMap { $0["text"] as? String }
    }

    /// How many connections clients opened.
    public var connections: Int {
        events.filter { $0["event"] as? String == "connected" }.count
    }

    /// The request paths of those connections.
    public var paths: [String] {
        events.filter { $0["event"] as? String == "connected" }.compactMap { $0["path"] as? String }
    }

    /// How many commands of `kind` the exchange has carried out.
    public func done(_ kind: String) -> Int {
        events.filter { $0["event"] as? String == "done" && $0["cmd"] as? String == kind }.count
    }

    public var stderr: String { process.stderr }
}
