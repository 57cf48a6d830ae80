import CoinWatchClient
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Testing

/// A call the server did not start (`RPCError.notProcessed`) is sent again on a new connection.
@Suite("CoinWatchClient sends again what a server did not start")
struct NotProcessedRetryTests {
    /// Two servers pricing ETH at 3 and at 7, and a client configured with both, the first first. The first runs one
    /// live call per connection (`--max-calls 1`), which a price stream of the client takes: the client's next call
    /// waits in it (`RPCClientConnection.heldCalls`).
    struct FullFirstServer {
        let first: ServerProcess
        let second: ServerProcess
        let client: CoinWatchClient
        /// The stream that takes the first server's one call; kept so that it goes on running.
        let running: RPCResponseStream<V1.PriceUpdate>.Iterator

        static func start() async throws -> FullFirstServer {
            let first = try await ServerProcess.start(arguments: ["--max-calls", "1"])
            let second = try await ServerProcess.start()
            try await FollowStreamTests.publish([tick("ETH", 3)], to: first.address)
            try await FollowStreamTests.publish([tick("ETH", 7)], to: second.address)
            var configuration = try CoinWatchClient.Configuration(address: "\(first.address),\(second.address)")
            configuration.defaultTimeout = .seconds(60)
            let client = CoinWatchClient(configuration: configuration)
            var running = client.streamPrices(symbols: ["ETH"]).makeAsyncIterator()
            #expect(try await running.next()?.priceText == "3", "the stream runs on the first server")
            return FullFirstServer(first: first, second: second, client: client, running: running)
        }

        /// Waits until the client holds one call, then sends the first server SIGTERM: it sends GoAway naming the
        /// stream as its last call, and stops taking connections.
        func drainFirstOnceOneCallIsHeld() async throws {
            let connection = try await client.connect()
            #expect(await eventually { connection.heldCalls == 1 })
            first.terminate()
        }

        func stop() {
            client.close()
            first.stopInBackground()
            second.stopInBackground()
        }
    }

    @Test("a call held past a draining server's call limit is answered by the next configured server")
    func heldCallMovesToTheNextServer() async throws {
        let servers = try await FullFirstServer.start()
        defer { servers.stop() }
        let client = servers.client
        let held = Task { try await client.prices(symbols: ["ETH"]) }
        try await servers.drainFirstOnceOneCallIsHeld()
        let prices = try await held.value
        #expect(prices.map(\.symbol) == ["ETH"])
        #expect(prices.first?.price == V1.Decimal(mantissa: 7, scale: 0), "answered by the second server: \(prices)")
    }

    @Test("a stream held past a draining server's call limit is started on the next configured server")
    func heldStreamMovesToTheNextServer() async throws {
        let servers = try await FullFirstServer.start()
        defer { servers.stop() }
        var held = servers.client.streamPrices(symbols: ["ETH"]).makeAsyncIterator()
        try await servers.drainFirstOnceOneCallIsHeld()
        #expect(try await held.next()?.priceText == "7", "started on the second server")
    }

    @Test("a held stream whose client is let go ends UNAVAILABLE, the client was closed, instead of starting again",
          .timeLimit(.minutes(5)))
    func heldStreamOfAClientLetGo() async throws {
        let server = try await ServerProcess.start(arguments: ["--max-calls", "1"])
        defer { server.stopInBackground() }
        try await FollowStreamTests.publish([tick("ETH", 3)], to: server.address)
        var client: CoinWatchClient? = CoinWatchClient(configuration: try .init(address: server.address))
        var running = client!.streamPrices(symbols: ["ETH"]).makeAsyncIterator()
        #expect(try await running.next()?.priceText == "3")
        var held = client!.streamPrices(symbols: ["ETH"]).makeAsyncIterator()
        let connection = try await client!.connect()
        #expect(await eventually { connection.heldCalls == 1 })
        // Letting go of the client closes its connection: the held stream, never started, would start again, but
        // there is no client to start it with.
        client = nil
        let error = await #expect(throws: RPCError.self) { _ = try await held.next() }
        #expect(error == RPCError(code: .unavailable, message: "the client was closed"))
    }
}
