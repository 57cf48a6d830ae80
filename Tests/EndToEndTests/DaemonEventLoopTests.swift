import CoinWatchClient
import CoinWatchModel
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Testing
import CoinWatchProto

/// How many event loops coinwatchd starts when not told: one per core it may run on, so a server
/// confined to fewer cores than the machine has does not oversubscribe them.
@Suite("coinwatchd event loops")
struct DaemonEventLoopTests {
    static let taskset = "/usr/bin/taskset"

    /// The start-up line that reports the loop count (`threads=N`).
    func listeningLine(_ server: ServerProcess) throws -> Substring {
        try #require(server.log.split(separator: "\n").first { $0.contains("listening on") })
    }

    @Test("by default one loop per core the process may use")
    func defaultFollowsBudget() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let listening = try listeningLine(server)
        #expect(listening.contains("threads=\(ProcessorBudget.current().cores)"), "\(listening)")
    }

    @Test("the listening line survives --log-level notice, and a quieter level hides the info lines around it")
    func listeningAtNotice() async throws {
        let server = try await ServerProcess.start(arguments: ["--log-level", "notice"])
        defer { server.stopInBackground() }
        let listening = try listeningLine(server)
        #expect(listening.contains("listening on 127.0.0.1:\(server.port)"), "\(listening)")
        #expect(!server.log.contains(" INFO ["), "\(server.log)")
    }

    @Test("confined to one core by taskset, it starts one loop and serves",
          .enabled(if: FileManager.default.isExecutableFile(atPath: taskset)))
    func confinedToOneCore() async throws {
        let server = try await ServerProcess.start(launcher: [Self.taskset, "--cpu-list", "0"])
        defer { server.stopInBackground() }
        let listening = try listeningLine(server)
        #expect(listening.contains("threads=1"), "\(listening)")
        let client = CoinWatchClient.ofDaemon(port: server.port)
        defer { client.close() }
        _ = try await client.setRule(device: "phone-1", symbol: "BTC", below: ExactDecimal(1000), above: nil)
        let settings = try await client.settings(device: "phone-1")
        #expect(settings.rules.keys.sorted() == ["BTC"])
    }

    @Test("an explicit --threads wins over the budget",
          .enabled(if: FileManager.default.isExecutableFile(atPath: taskset)))
    func explicitThreads() async throws {
        let server = try await ServerProcess.start(arguments: ["--threads", "3"],
                                                   launcher: [Self.taskset, "--cpu-list", "0"])
        defer { server.stopInBackground() }
        let listening = try listeningLine(server)
        #expect(listening.contains("threads=3"), "\(listening)")
    }
}
