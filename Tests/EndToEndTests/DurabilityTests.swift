import CoinWatchClient
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

/// The real coinwatchd binary: acknowledged saves survive kill -9, a store in use
/// or damaged is refused with a message that says what to do.
@Suite("coinwatchd durability", .serialized)
struct DurabilityTests {
    /// Saves already acknowledged, by device.
    final class Acknowledged: Sendable {
        let devices = Mutex<[String: Int64]>([:])
    }

    @Test("every acknowledged save survives kill -9 during concurrent saves from several clients")
    func crashDuringSaves() async throws {
        let server = try await ServerProcess.start()
        let acknowledged = Acknowledged()
        let clients = 6
        let saves = 300
        // The client whose acknowledgement is the 200th kills the server at once, so the crash always lands in the
        // middle of the load, whatever the machine's speed.
        let crashAfter = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                group.addTask {
                    let coinwatch = CoinWatchClient.ofDaemon(port: server.port)
                    defer { coinwatch.close() }
                    for index in 0..<saves {
                        let device = "crash-\(client)-\(index)"
                        do {
                            _ = try await coinwatch.setRule(device: device, symbol: "BTC", below: ExactDecimal(Int64(1000 + index)), above: nil)
                        } catch {
                            return  // the server is gone: stop this client
                        }
                        let count = acknowledged.devices.withLock { devices in
                            devices[device] = Int64(1000 + index)
                            return devices.count
                        }
                        if count == crashAfter { server.crash() }
                    }
                }
            }
            try await group.waitForAll()
        }
        let saved = acknowledged.devices.withLock { $0 }
        #expect(saved.count >= crashAfter)
        #expect(saved.count < clients * saves, "the crash should have interrupted the load")

        let restarted = try await ServerProcess.start(dataDirectory: server.dataDirectory)
        defer { restarted.stopInBackground() }
        let reader = CoinWatchClient.ofDaemon(port: restarted.port)
        defer { reader.close() }
        var missing: [String] = []
        for (device, below) in saved {
            let settings = try? await reader.settings(device: device)
            if settings?.rules["BTC"]?.below.flatMap(ExactDecimal.init) != ExactDecimal(below) { missing.append(device) }
        }
        #expect(missing.isEmpty, "acknowledged saves lost after kill -9: \(missing.prefix(10))")
    }

    @Test("a second coinwatchd on the same data directory is refused with a clear message")
    func secondInstance() async throws {
        let first = try await ServerProcess.start()
        defer { first.stopInBackground() }
        let error = await #expect(throws: ServerProcessError.self) {
            _ = try await ServerProcess.start(dataDirectory: first.dataDirectory)
        }
        #expect(error?.message.contains("is in use by another coinwatchd") == true, "\(error?.message ?? "")")
    }

    @Test("a damaged store is refused with a pointer to repair, and repair recovers it")
    func damagedStore() async throws {
        let server = try await ServerProcess.start()
        let client = CoinWatchClient.ofDaemon(port: server.port)
        _ = try await client.setRule(device: "survivor", symbol: "ETH", below: nil, above: ExactDecimal(5000))
        client.close()
        await server.stop()
        let database = server.dataDirectory.path + "/db"
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: database + "/CURRENT"))

        let refused = await #expect(throws: ServerProcessError.self) {
            _ = try await ServerProcess.start(dataDirectory: server.dataDirectory)
        }
        #expect(refused?.message.contains("run 'coinwatchd repair --data \(database)'") == true, "\(refused?.message ?? "")")

        let repair = try await ServerProcess.run(["repair", "--data", database])
        #expect(repair.status == 0, "\(repair.output)")
        #expect(repair.output.contains("repaired \(database)"))

        let repaired = try await ServerProcess.start(dataDirectory: server.dataDirectory)
        defer { repaired.stopInBackground() }
        let reader = CoinWatchClient.ofDaemon(port: repaired.port)
        defer { reader.close() }
        let settings = try await reader.settings(device: "survivor")
        #expect(settings.rules["ETH"]?.above.flatMap(ExactDecimal.init) == ExactDecimal(5000))
    }
}
