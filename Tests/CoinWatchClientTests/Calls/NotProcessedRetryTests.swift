import CoinWatchClient
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Testing

/// A call the server did not start (`RPCError.notProcessed`) is sent again on a new connection.
@Suite("CoinWatchClient sends again what a server did not start")
struct NotProcessedRetryTests {
    @Test("a call held past a draining server's call limit is answered by the next configured server")
    func heldCallMovesToTheNextServer() async throws {
        // One live call per connection on the first server: a stream takes it, and the unary call waits in the client.
        let first = try await ServerProcess.start(arguments: ["--max-calls", "1"])
        defer { first.stopInBackground() }
        let second = try await ServerProcess.start()
        defer { second.stopInBackground() }
        try await FollowStreamTests.publish([tick("ETH", 3)], to: first.address)
        try await FollowStreamTests.publish([tick("ETH", 7)], to: second.address)

        var configuration = try CoinWatchClient.Configuration(address: "\(first.address),\(second.address)")
        configuration.defaultTimeout = .seconds(60)
        let client = CoinWatchClient(configuration: configuration)
        defer { client.close() }
        let stream = client.streamPrices(symbols: ["ETH"])
        var updates = stream.makeAsyncIterator()
        #expect(try await updates.next()?.priceText == "3", "the stream runs on the first server")

        let held = Task { try await client.prices(symbols: ["ETH"]) }
        let connection = try await client.connect()
        #expect(await eventually { connection.heldCalls == 1 })
        // SIGTERM: the first server sends GoAway naming the stream as its last call, and stops taking connections.
        first.terminate()
        let prices = try await held.value
        #expect(prices.map(\.symbol) == ["ETH"])
        #expect(prices.first?.price == V1.Decimal(mantissa: 7, scale: 0), "answered by the second server: \(prices)")
    }

    @Test("a stream held past a draining server's call limit is started on the next configured server")
    func heldStreamMovesToTheNextServer() async throws {
        let first = try await ServerProcess.start(arguments: ["--max-calls", "1"])
        defer { first.stopInBackground() }
        let second = try await ServerProcess.start()
        defer { second.stopInBackground() }
        try await FollowStreamTests.publish([tick("ETH", 3)], to: first.address)
        try await FollowStreamTests.publish([tick("ETH", 7)], to: second.address)

        let client = CoinWatchClient(configuration: try CoinWatchClient.Configuration(address: "\(first.address),\(second.address)"))
        defer { client.close() }
        var running = client.streamPrices(symbols: ["ETH"]).makeAsyncIterator()
        #expect(try await running.next()?.priceText == "3", "the first stream runs on the first server")

        let held = client.streamPrices(symbols: ["ETH"])
        let connection = try await client.connect()
        #expect(await eventually { connection.heldCalls == 1 })
        first.terminate()
        var moved = held.makeAsyncIterator()
        #expect(try await moved.next()?.priceText == "7", "started on the second server")
    }
}
