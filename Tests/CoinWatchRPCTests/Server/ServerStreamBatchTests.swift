import CoinWatchProto
import Testing
@testable import CoinWatchRPC

/// `ServerStream.withMessageBatch` writes whole `Message` frames by hand; the client's generated decoder must
/// read them as the messages meant, for one- and multi-byte call ids and payload lengths.
@Suite(.timeLimit(.minutes(3)))
struct ServerStreamBatchTests {
    /// Symbols of the messages each stream sends: short, and long enough for a two-byte payload length.
    static let symbols = ["BTC", String(repeating: "L", count: 200), "ETH"]

    /// `StreamPrices` answered through a batch: each message is the `PriceUpdate` without its sequence as the
    /// payload, and the sequence field as the suffix.
    static func methods() -> [RPCMethod] {
        [
            .unary(V1.Health.check, inline: { _, _ in V1.HealthCheckResponse(status: .serving) }),
            .serverStream(V1.CoinWatch.streamPrices, onLoop: { _, stream in
                stream.withMessageBatch { batch in
                    for (index, symbol) in symbols.enumerated() {
                        let payload = V1.PriceUpdate(symbol: symbol, price: V1.Decimal(mantissa: 42, scale: 1))
                        let suffix = V1.PriceUpdate(sequence: UInt64(index + 1)).serializedBytes()
                        payload.serializedBytes().withUnsafeBytes { payload in
                            suffix.withUnsafeBytes { suffix in batch.send(payload: payload, suffix: suffix) }
                        }
                    }
                }
                stream.send(payload: UnsafeRawBufferPointer(start: nil, count: 0),
                            suffix: UnsafeRawBufferPointer(start: nil, count: 0))
                stream.finish()
            }),
        ]
    }

    @Test("batched frames decode as the messages meant, for short and long call ids")
    func batchedFramesDecode() async throws {
        var configuration = RPCServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopThreads = 1
        let server = try RPCServer(configuration: configuration, methods: Self.methods())
        try server.start()
        let group = try EventLoopGroup(threads: 1)
        let client = try await RPCClientConnection.connect(host: "127.0.0.1", port: server.port, on: group.next())

        var callsMade = 0
        // Call ids 1 and then past 127, where the id takes two varint bytes.
        for round in 0..<2 {
            let updates = try await collect(client)
            #expect(updates.map(\.symbol) == Self.symbols + [""])
            #expect(updates.map(\.sequence) == [1, 2, 3, 0])
            #expect(updates.prefix(3).allSatisfy { $0.price == V1.Decimal(mantissa: 42, scale: 1) })
            callsMade += 1
            if round == 0 {
                while callsMade < 130 {
                    _ = try await client.unary(V1.Health.check, V1.HealthCheckRequest())
                    callsMade += 1
                }
            }
        }
        client.close()
        await server.shutdownNow()
        await group.shutdownGracefully()
    }

    private func collect(_ client: RPCClientConnection) async throws -> [V1.PriceUpdate] {
        var updates: [V1.PriceUpdate] = []
        for try await update in client.serverStream(V1.CoinWatch.streamPrices, V1.StreamPricesRequest()) {
            updates.append(update)
        }
        return updates
    }
}
