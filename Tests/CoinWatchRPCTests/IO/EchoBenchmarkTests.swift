import CoinWatchCore
import CoinWatchRPC
import Glibc
import Testing

/// Echo throughput, run only with COINWATCH_IO_BENCH=1 (best in a release build). Prints figures;
/// asserts only that traffic flowed.
@Suite("Echo benchmark", .serialized)
struct EchoBenchmarkTests {
    @Test("50 connections x N in flight, round trips per second (printed)",
          .enabled(if: EchoBenchmarkTests.isEnabled), arguments: [1, 16])
    func echoThroughput(inFlight: Int) async throws {
        let connectionCount = 50
        let seconds = 3.0
        let server = try TestServer(threads: 1) { EchoDelegate() }
        let clients = try EventLoopGroup(threads: 1, namePrefix: "bench-cli")
        let loop = clients.loops[0]
        var pingers: [Pinger] = []
        for _ in 0..<connectionCount {
            let pinger = Pinger()
            pingers.append(pinger)
            pinger.connection = try await connectStarted(port: server.port, on: loop) { pinger }
        }
        let all = pingers
        await onLoop(loop) {
            for pinger in all {
                for _ in 0..<inFlight { pinger.sendNext() }
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        let clock = ContinuousClock()
        let start = clock.now
        let before = await onLoop(loop) { (all.reduce(0) { $0 + $1.roundTrips }, loop.statistics) }
        try await Task.sleep(for: .seconds(seconds))
        let after = await onLoop(loop) { (all.reduce(0) { $0 + $1.roundTrips }, loop.statistics) }
        let elapsed = clock.now - start
        let serverStats = await onLoop(server.group.loops[0]) { server.group.loops[0].statistics }
        let trips = after.0 - before.0
        let elapsedSeconds = elapsed.inSeconds
        let perSecond = Double(trips) / elapsedSeconds
        print("echo: \(connectionCount) connections x \(inFlight) in flight, \(trips) round trips in \(elapsed): "
              + "\(Int(perSecond)) round trips/s; client loop: \(after.1.iterations - before.1.iterations) iterations, "
              + "\(after.1.reads - before.1.reads) reads, \(after.1.writes - before.1.writes) writes; "
              + "server loop total: \(serverStats.iterations) iterations, \(serverStats.reads) reads, "
              + "\(serverStats.writes) writes")
        #expect(trips > 0)
        await clients.shutdownGracefully()
        await server.shutdown()
    }

    static var isEnabled: Bool {
        ProcessInfoLite.environment("COINWATCH_IO_BENCH") != nil
    }
}

/// Sends a 32-byte frame for every echo it receives, keeping a constant number in flight.
final class Pinger: ConnectionDelegate, @unchecked Sendable {
    // @unchecked Sendable: `roundTrips` and `connection` are touched only on the client loop's thread
    // (the benchmark reads them through `onLoop`).
    var roundTrips = 0
    var connection: Connection?
    let body = pattern(count: 32, seed: 1)

    func sendNext() {
        body.withUnsafeBytes { connection?.enqueueFrame(body: $0) }
    }

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        roundTrips += 1
        sendNext()
    }
}

enum ProcessInfoLite {
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
