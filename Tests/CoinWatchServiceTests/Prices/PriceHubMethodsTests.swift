import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Synchronization
import Testing
@testable import CoinWatchService

/// `PublishPrices`, `GetPrices` and the request checks, over the wire.
@Suite(.timeLimit(.minutes(2)))
struct PriceHubMethodsTests {
    typealias F = PriceFixtures

    static func publishRequest(_ ticks: [(String, String)]) -> V1.PublishPricesRequest {
        V1.PublishPricesRequest(
            ticks: ticks.map { V1.Tick(symbol: $0.0, price: F.wire($0.1), timeMs: 1_700_000_000_000) })
    }

    @Test func publishesFromAStreamingConnectionReachStreamsOnEveryLoopInOrder() async throws {
        let harness = try HubHarness()
        // Four connections over the server's two loops; the publisher is one of them, so its own loop has streams.
        var clients: [RPCClientConnection] = []
        var recorders: [UpdateRecorder] = []
        for _ in 0..<4 {
            let client = try await harness.connect()
            clients.append(client)
            recorders.append(UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC", "ETH"])))
        }
        #expect(await eventually { harness.hub.subscriberCount == 4 })
        for step in 1...50 {
            let request = Self.publishRequest([("BTC", "\(60000 + step)"), ("ETH", "\(3000 + step)")])
            let response = try await clients[0].unary(V1.CoinWatch.publishPrices, request)
            #expect(response.accepted == 2)
        }
        let expected = (1...50).flatMap { [F.price("\(60000 + $0)"), F.price("\(3000 + $0)")] }
        for recorder in recorders {
            #expect(await eventually { recorder.updates.count >= 100 })
            #expect(recorder.updates.compactMap { F.exact($0.price) } == expected)
            #expect(recorder.updates.map(\.sequence) == Array(1...100))
        }
        await harness.shutdown()
    }

    @Test func publishWithoutATokenConfiguredIsOpen() async throws {
        let harness = try HubHarness()
        let client = try await harness.connect()
        let response = try await client.unary(
            V1.CoinWatch.publishPrices, Self.publishRequest([("btc", "64250.5"), ("ETH", "3450.25")]))
        #expect(response.accepted == 2)
        let prices = try await client.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest())
        #expect(prices.prices.map(\.symbol) == ["BTC", "ETH"])
        #expect(F.exact(prices.prices[0].price) == F.price("64250.5"))
        #expect(prices.prices[0].timeMs == 1_700_000_000_000)
        await harness.shutdown()
    }

    @Test func publishRequiresTheTokenWhenConfigured() async throws {
        let harness = try HubHarness(publishToken: "s3cret")
        let anonymous = try await harness.connect()
        let request = Self.publishRequest([("BTC", "64250.5")])
        await #expect(throws: RPCError(code: .unauthenticated, message: "PublishPrices requires the publish token")) {
            _ = try await anonymous.unary(V1.CoinWatch.publishPrices, request)
        }
        await #expect(throws: RPCError(code: .unauthenticated, message: "PublishPrices requires the publish token")) {
            _ = try await anonymous.unary(V1.CoinWatch.publishPrices, request, metadata: ["authorization": "s3cre"])
        }
        #expect(harness.hub.knownSymbols.isEmpty)

        await #expect(throws: RPCError(code: .unauthenticated, message: "PublishPrices requires the publish token")) {
            _ = try await anonymous.unary(V1.CoinWatch.publishPrices, request, metadata: ["authorization": "Bearer s3cre"])
        }
        let viaMetadata = try await anonymous.unary(
            V1.CoinWatch.publishPrices, request, metadata: ["authorization": "s3cret"])
        #expect(viaMetadata.accepted == 1)
        // The HTTP form, `Bearer <token>` (any case of the scheme), is accepted as well as the bare token.
        for credential in ["Bearer s3cret", "bearer s3cret"] {
            let viaBearer = try await anonymous.unary(
                V1.CoinWatch.publishPrices, request, metadata: ["authorization": credential])
            #expect(viaBearer.accepted == 1)
        }
        let withHello = try await harness.connect(authToken: "s3cret")
        let viaHello = try await withHello.unary(V1.CoinWatch.publishPrices, Self.publishRequest([("ETH", "3450.25")]))
        #expect(viaHello.accepted == 1)
        let withBearerHello = try await harness.connect(authToken: "Bearer s3cret")
        let viaBearerHello = try await withBearerHello.unary(
            V1.CoinWatch.publishPrices, Self.publishRequest([("ETH", "3450.25")]))
        #expect(viaBearerHello.accepted == 1)
        #expect(harness.hub.knownSymbols.map(\.rawValue) == ["BTC", "ETH"])
        // Reading needs no token.
        let prices = try await anonymous.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest(symbols: ["ETH"]))
        #expect(prices.prices.map(\.symbol) == ["ETH"])
        await harness.shutdown()
    }

    struct InvalidTicks: Sendable, CustomTestStringConvertible {
        let ticks: [V1.Tick]
        let message: String
        var testDescription: String { message }
    }

    static let invalidTicks: [InvalidTicks] = [
        InvalidTicks(
            ticks: [V1.Tick(symbol: "BTC", price: F.wire("1")), V1.Tick(symbol: "ETH")],
            message: "ticks[1].price: is required"),
        InvalidTicks(
            ticks: [V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: -5, scale: 0))],
            message: "ticks[0].price: must be greater than 0 (got -5)"),
        InvalidTicks(
            ticks: [V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: 0, scale: 2))],
            message: "ticks[0].price: must be greater than 0 (got 0)"),
        InvalidTicks(
            ticks: [V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: 1, scale: 19))],
            message: "ticks[0].price: scale must be 0–18 (got 19)"),
        InvalidTicks(
            ticks: [V1.Tick(symbol: "B-TC", price: F.wire("1"))],
            message: "ticks[0].symbol: must be 2–10 characters of A-Z 0-9 (got 'B-TC')"),
        InvalidTicks(
            ticks: [V1.Tick(symbol: "BTC", price: F.wire("1"), timeMs: -1)],
            message: "ticks[0].time_ms: must be milliseconds since the Unix epoch, or 0 for now (got -1)"),
    ]

    @Test(arguments: invalidTicks)
    func invalidTicksAreRefusedWholeNamingTheField(_ invalid: InvalidTicks) async throws {
        let harness = try HubHarness()
        let client = try await harness.connect()
        await #expect(throws: RPCError(code: .invalidArgument, message: invalid.message)) {
            _ = try await client.unary(V1.CoinWatch.publishPrices, V1.PublishPricesRequest(ticks: invalid.ticks))
        }
        #expect(harness.hub.knownSymbols.isEmpty)
        await harness.shutdown()
    }

    @Test func timeZeroMeansNow() async throws {
        let harness = try HubHarness()
        let client = try await harness.connect()
        let before = WallClock.milliseconds()
        _ = try await client.unary(
            V1.CoinWatch.publishPrices, V1.PublishPricesRequest(ticks: [V1.Tick(symbol: "BTC", price: F.wire("2"))]))
        let after = WallClock.milliseconds()
        let stored = try #require(harness.hub.latestPrice(of: F.symbol("BTC")))
        #expect(stored.timeMs >= before && stored.timeMs <= after)
        await harness.shutdown()
    }

    @Test("in cluster mode (an upstream), PublishPrices refuses new symbols past the limit with the same error")
    func theSymbolLimitIsRefusedThroughAnUpstream() async throws {
        var configuration = PriceHub.Configuration()
        configuration.maxKnownSymbols = 2
        let harness = try HubHarness(hub: configuration)
        let upstream = HeldUpstream()
        harness.hub.route(through: upstream)
        let client = try await harness.connect()
        let refusal = RPCError(
            code: .resourceExhausted,
            message: "the hub tracks at most 2 symbols; ticks for new symbols were refused (2 of 3 applied)")
        await #expect(throws: refusal) {
            _ = try await client.unary(
                V1.CoinWatch.publishPrices, Self.publishRequest([("AA", "1"), ("BB", "1"), ("CC", "1")]))
        }
        #expect(upstream.take().map(\.symbol.rawValue) == ["AA", "BB"])
        await harness.shutdown()
    }

    @Test func tooManyTicksOrSymbolsAreRefused() async throws {
        var configuration = PriceHub.Configuration()
        configuration.maxTicksPerPublish = 3
        configuration.maxKnownSymbols = 2
        configuration.maxSymbolsPerRequest = 2
        let harness = try HubHarness(hub: configuration)
        let client = try await harness.connect()
        await #expect(throws: RPCError(code: .invalidArgument, message: "ticks: at most 3 ticks per call (got 4)")) {
            _ = try await client.unary(
                V1.CoinWatch.publishPrices, Self.publishRequest([("AA", "1"), ("BB", "1"), ("CC", "1"), ("DD", "1")]))
        }
        let refusal = RPCError(
            code: .resourceExhausted,
            message: "the hub tracks at most 2 symbols; ticks for new symbols were refused (2 of 3 applied)")
        await #expect(throws: refusal) {
            _ = try await client.unary(
                V1.CoinWatch.publishPrices, Self.publishRequest([("AA", "1"), ("BB", "1"), ("CC", "1")]))
        }
        #expect(harness.hub.knownSymbols.map(\.rawValue) == ["AA", "BB"])
        // Known symbols keep updating.
        let again = try await client.unary(V1.CoinWatch.publishPrices, Self.publishRequest([("AA", "2")]))
        #expect(again.accepted == 1)
        let tooMany = RPCError(code: .invalidArgument, message: "symbols: at most 2 symbols per request (got 3)")
        await #expect(throws: tooMany) {
            _ = try await client.unary(V1.CoinWatch.getPrices, V1.GetPricesRequest(symbols: ["AA", "BB", "CC"]))
        }
        #expect(await harness.hub.statistics().refusedTicks == 1)
        await harness.shutdown()
    }

    @Test func invalidStreamRequestsEndWithInvalidArgument() async throws {
        let harness = try HubHarness()
        let client = try await harness.connect()
        let badSymbol = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC", "b!"]))
        let tooLong = UpdateRecorder(
            client: client, request: V1.StreamPricesRequest(symbols: ["BTC"], minIntervalMs: 60_001))
        let tooMany = UpdateRecorder(
            client: client, request: V1.StreamPricesRequest(symbols: (0..<257).map { "S\($0)" }))
        #expect(await eventually { badSymbol.ended && tooLong.ended && tooMany.ended })
        #expect(badSymbol.error == RPCError(
            code: .invalidArgument, message: "symbols[1]: must be 2–10 characters of A-Z 0-9 (got 'b!')"))
        #expect(tooLong.error == RPCError(
            code: .invalidArgument, message: "min_interval_ms: must be at most 60000 (got 60001)"))
        #expect(tooMany.error == RPCError(
            code: .invalidArgument, message: "symbols: at most 256 symbols per request (got 257)"))
        #expect(harness.hub.subscriberCount == 0)
        await harness.shutdown()
    }

    @Test func alertHookSeesEveryTickInPublishOrder() async throws {
        let seen = Mutex<[PriceTick]>([])
        let harness = try HubHarness(onTicks: { ticks in seen.withLock { $0 += ticks } })
        let client = try await harness.connect()
        let recorder = UpdateRecorder(
            client: client, request: V1.StreamPricesRequest(symbols: ["BTC"], minIntervalMs: 1_000))
        #expect(await eventually { harness.hub.subscriberCount == 1 })
        var published: [PriceTick] = []
        for step in 1...100 {
            let tick = F.tick("BTC", "\(64_000 + step)")
            published.append(tick)
            harness.hub.publish([tick])
        }
        _ = try await client.unary(V1.CoinWatch.publishPrices, Self.publishRequest([("ETH", "3450.25")]))
        published.append(F.tick("ETH", "3450.25"))
        // The stream is conflated; the hook is not.
        #expect(seen.withLock { $0 } == published)
        #expect(recorder.updates.count < 100)
        await harness.shutdown()
    }
}
