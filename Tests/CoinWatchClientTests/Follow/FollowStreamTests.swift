import CoinWatchClient
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Testing

/// Followed streams against real servers: what a dashboard sees when its server restarts or a node goes away.
/// Every wait is `eventually`'s generous bound, so a busy machine makes these slower, never wrong.
@Suite("followed streams", .timeLimit(.minutes(5)))
struct FollowStreamTests {
    /// Publishes `ticks` to the server at `address` on a client of its own.
    static func publish(_ ticks: [V1.Tick], to address: String) async throws {
        var configuration = try CoinWatchClient.Configuration(address: address)
        // The call's deadline covers connecting, which a loaded full run can make take longer than the default 10 s.
        configuration.defaultTimeout = .seconds(60)
        let publisher = CoinWatchClient(configuration: configuration)
        defer { publisher.close() }
        try await publisher.publish(ticks)
    }

    /// A port nothing listens on, held bound for the test's length, so that a server started by a test beside this
    /// one cannot take it. Not a stopped server's: a server stopped right after it started can miss the signal and
    /// take the whole stop timeout to die.
    static func unreachablePort() throws -> RefusingLoopbackPort {
        try RefusingLoopbackPort()
    }

    @Test("a price stream resumes when its server restarts on the same port, and marks where the new stream began")
    func resumesAfterRestart() async throws {
        var server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        try await Self.publish([tick("BTC", 1)], to: server.address)
        let recorder = try FollowRecorder(server.address) { $0.followPrices(symbols: ["BTC"], options: .quick) }
        defer { recorder.cancel() }
        #expect(await eventually { recorder.elements.contains { $0.priceText == "1" } })

        server = try await server.restart()
        try await Self.publish([tick("BTC", 2)], to: server.address)
        #expect(await eventually { recorder.elements.contains { $0.priceText == "2" } }, "\(recorder.states)")

        // Two streams at least: a stream opened on a connection that was just going away may be lost again at once.
        let servers = recorder.servers
        #expect(servers.count >= 2 && servers.allSatisfy { $0 == server.address }, "\(recorder.states)")
        #expect(recorder.states.contains { if case .waiting = $0 { true } else { false } })
        #expect(recorder.ending == nil)
        let numbers = recorder.states.compactMap { state -> Int? in
            if case .connected(_, let stream) = state { return stream }
            return nil
        }
        #expect(numbers == Array(1...numbers.count))
        // Each stream numbers its updates from 1: a 1 that follows a `.connected` is a restart, not a gap.
        let streams = recorder.streams
        #expect(streams.first?.first?.priceText == "1")
        #expect(streams.last?.contains { $0.priceText == "2" } == true)
        for stream in streams {
            #expect(stream.map(\.sequence) == Array((UInt64(1)...).prefix(stream.count)), "\(streams)")
        }
    }

    @Test("a stream moves to the next configured server when its server goes away")
    func movesToNextServer() async throws {
        let first = try await ServerProcess.start()
        defer { first.stopInBackground() }
        let second = try await ServerProcess.start()
        defer { second.stopInBackground() }
        try await Self.publish([tick("ETH", 7)], to: second.address)
        let recorder = try FollowRecorder("\(first.address),\(second.address)") {
            $0.followPrices(symbols: ["ETH"], options: .quick)
        }
        defer { recorder.cancel() }
        #expect(await eventually { recorder.servers == [first.address] })

        await first.stop()
        #expect(await eventually { recorder.elements.contains { $0.priceText == "7" } }, "\(recorder.states)")
        // The first server may be tried again while its going away is noticed; the last stream is the second's.
        #expect(recorder.servers.first == first.address && recorder.servers.last == second.address, "\(recorder.states)")
        #expect(recorder.ending == nil)
    }

    @Test("an error that retrying cannot fix ends the follow, of prices as of alerts")
    func nonRetryableErrorEnds() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let prices = try FollowRecorder(server.address) { $0.followPrices(symbols: ["not a symbol"], options: .quick) }
        defer { prices.cancel() }
        let alerts = try FollowRecorder(server.address) { $0.followAlerts(device: "", options: .quick) }
        defer { alerts.cancel() }
        #expect(await eventually { prices.finished && alerts.finished })
        for states in [prices.states, alerts.states] {
            guard case .ended(let error) = states.last else {
                Issue.record("not ended: \(states)")
                continue
            }
            #expect(error?.code == .invalidArgument, "\(states)")
            #expect(!states.contains { if case .waiting = $0 { true } else { false } })
        }
    }

    @Test("an unreachable server is retried, unless the first connection must succeed")
    func firstConnection() async throws {
        let unreachable = try Self.unreachablePort()
        defer { withExtendedLifetime(unreachable) {} }
        let address = "127.0.0.1:\(unreachable.port)"
        let patient = try FollowRecorder(address) { $0.followPrices(options: .quick) }
        defer { patient.cancel() }
        #expect(await eventually {
            patient.states.filter { if case .waiting = $0 { true } else { false } }.count >= 2
        })
        #expect(patient.ending == nil)
        if case .waiting(_, _, let reason) = patient.states.last(where: { if case .waiting = $0 { true } else { false } }) {
            #expect(reason.code == .unavailable)
        }

        var options = FollowOptions.quick
        options.retryFirstConnection = false
        let strict = try FollowRecorder(address) { $0.followPrices(options: options) }
        defer { strict.cancel() }
        #expect(await eventually { strict.finished })
        #expect(strict.ending??.code == .unavailable, "\(strict.states)")
    }

    @Test("cancelling ends the follow promptly, while streaming and while pausing")
    func cancellation() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        try await Self.publish([tick("BTC", 3)], to: server.address)
        let streaming = try FollowRecorder(server.address) { $0.followPrices() }
        #expect(await eventually { !streaming.elements.isEmpty })
        streaming.cancel()
        #expect(await eventually { streaming.finished })
        #expect(streaming.ending == .some(nil))

        // A pause of an hour: only cancellation can end it within the wait.
        var options = FollowOptions()
        options.backoff = FollowBackoff(initial: .seconds(3600), maximum: .seconds(3600))
        let unreachable = try Self.unreachablePort()
        defer { withExtendedLifetime(unreachable) {} }
        let pausing = try FollowRecorder("127.0.0.1:\(unreachable.port)") { $0.followPrices(options: options) }
        #expect(await eventually { pausing.states.contains { if case .waiting = $0 { true } else { false } } })
        pausing.cancel()
        #expect(await eventually { pausing.finished })
        #expect(pausing.ending == .some(nil))
    }
}
