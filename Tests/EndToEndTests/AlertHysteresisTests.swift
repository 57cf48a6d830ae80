import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchTestSupport
import Foundation
import Testing

/// `--alert-hysteresis`: how far back past a threshold a price must go before a fired side fires again.
@Suite("coinwatchd --alert-hysteresis")
struct AlertHysteresisTests {
    /// The value of a counter in coinwatchd's /metrics.
    static func counter(_ name: String, _ server: ServerProcess) -> Int? {
        guard let child = try? ChildProcess("/usr/bin/curl", [
            "--silent", "--max-time", "30", "http://127.0.0.1:\(server.port)/metrics",
        ]), child.wait(timeout: .seconds(60)) == 0 else { return nil }
        let line = child.stdout.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }
    }

    /// Alerts fired by BTC going 90, 101, 95, 101, 89, 101 against `above 100`, each tick evaluated before the next.
    static func fired(hysteresis: [String]) async throws -> Int? {
        let server = try await ServerProcess.start(arguments: hysteresis)
        defer { server.stopInBackground() }
        let client = CoinWatchClient.ofDaemon(port: server.port)
        defer { client.close() }
        _ = try await client.setRule(device: "phone-1", symbol: "BTC", below: nil, above: ExactDecimal(100))
        for (index, price) in [90, 101, 95, 101, 89, 101].enumerated() {
            _ = try await client.publish([V1.Tick(symbol: "BTC", price: V1.Decimal(ExactDecimal(Int64(price))))])
            let evaluated = await eventually(timeout: .seconds(60)) {
                (Self.counter("coinwatch_alert_evaluations_total", server) ?? 0) >= index + 1
            }
            try #require(evaluated, "tick \(index) was not evaluated")
        }
        return Self.counter("coinwatch_alerts_fired_total", server)
    }

    @Test("a 10% band ignores a dip to 95 below 100 and fires again after one to 89; 0.5% fires after both")
    func band() async throws {
        #expect(try await Self.fired(hysteresis: ["--alert-hysteresis", "10%"]) == 2)
        #expect(try await Self.fired(hysteresis: []) == 3)
    }
}
