import CoinWatchModel
import CoinWatchProto
import CoinWatchTestSupport
import Synchronization
import Testing
@testable import CoinWatchService

/// Stale symbols: one update says so, the next price clears it, and `only_changes` never hides either.
@Suite(.timeLimit(.minutes(2)))
struct PriceHubStaleTests {
    typealias F = PriceFixtures

    @Test func aStreamGetsOneStaleUpdateAndTheNextPriceClearsIt() async throws {
        let harness = try HubHarness()
        harness.hub.publish([PriceTick(symbol: F.symbol("BTC"), price: F.price("64250.5"), timeMs: 1000, sources: 3)])
        let client = try await harness.connect()
        let plain = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC"]))
        let changes = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC"], onlyChanges: true))
        #expect(await eventually { plain.updates.count == 1 && changes.updates.count == 1 })

        #expect(harness.hub.markStale([F.symbol("BTC"), F.symbol("ETH")]) == 1)
        #expect(harness.hub.markStale([F.symbol("BTC")]) == 0)
        #expect(harness.hub.latestPrice(of: F.symbol("BTC"))?.isStale == true)
        #expect(await eventually { plain.updates.count == 2 && changes.updates.count == 2 })

        harness.hub.publish([PriceTick(symbol: F.symbol("BTC"), price: F.price("64250.5"), timeMs: 2000, sources: 2)])
        #expect(await eventually { plain.updates.count == 3 && changes.updates.count == 3 })

        for recorder in [plain, changes] {
            let updates = recorder.updates
            #expect(updates.map(\.stale) == [false, true, false])
            #expect(updates.map(\.sources) == [3, 0, 2])
            #expect(updates.map { F.exact($0.price) } == Array(repeating: F.price("64250.5"), count: 3))
            #expect(updates.map(\.sourceTimeMs) == [1000, 1000, 2000])
            #expect(updates.map(\.sequence) == [1, 2, 3])
        }
        await harness.shutdown()
    }

    @Test func aStreamStartedWhileStaleSeesItInTheSnapshot() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("ETH", "3450.25")])
        harness.hub.markStale([F.symbol("ETH")])
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest())
        #expect(await eventually { recorder.updates.count == 1 })
        #expect(recorder.updates.first?.stale == true)
        #expect(F.exact(recorder.updates.first?.price) == F.price("3450.25"))
        #expect(harness.hub.latestPrices().map(\.isStale) == [true])
        await harness.shutdown()
    }

    @Test func theAlertHookSeesStaleTicks() throws {
        let seen = SeenTicks()
        let hub = try PriceHub(onTicks: { seen.append($0) })
        hub.publish([F.tick("BTC", "1")])
        hub.markStale([F.symbol("BTC"), F.symbol("SOL")])
        #expect(seen.ticks.map(\.isStale) == [false, true])
        #expect(seen.ticks.last?.price == F.price("1"))
        hub.close()
    }

    @Test("with an upstream (cluster mode), a symbol turns stale when the upstream hands the stale tick back")
    func markStaleGoesThroughTheUpstream() throws {
        let seen = SeenTicks()
        let hub = try PriceHub(onTicks: { seen.append($0) })
        defer { hub.close() }
        let upstream = HeldUpstream()
        hub.route(through: upstream)
        hub.publish([F.tick("BTC", "1")])
        hub.deliver(upstream.take())
        #expect(hub.markStale([F.symbol("BTC"), F.symbol("SOL")]) == 1)
        #expect(hub.latestPrice(of: F.symbol("BTC"))?.isStale == false, "nothing applied before the upstream returns it")
        let sent = upstream.take()
        #expect(sent.map(\.isStale) == [true])
        #expect(sent.first?.price == F.price("1"))
        hub.deliver(sent)
        #expect(hub.latestPrice(of: F.symbol("BTC"))?.isStale == true)
        #expect(seen.ticks.map(\.isStale) == [false, true])
        #expect(hub.markStale([F.symbol("BTC")]) == 0)
        #expect(upstream.take().isEmpty)
    }
}

/// A hub in cluster mode: what it publishes goes to an upstream and comes back through `deliver`.
@Suite struct PriceHubUpstreamTests {
    typealias F = PriceFixtures

    @Test("the symbol limit is applied before ticks go upstream, as it is to ticks applied here")
    func theSymbolLimitHoldsWithAnUpstream() throws {
        var configuration = PriceHub.Configuration()
        configuration.maxKnownSymbols = 2
        let hub = try PriceHub(configuration: configuration)
        defer { hub.close() }
        let upstream = HeldUpstream()
        hub.route(through: upstream)
        // A new symbol counts once however often the batch names it; one past the limit is refused.
        #expect(hub.publish([F.tick("AA", "1"), F.tick("BB", "1"), F.tick("AA", "2"), F.tick("CC", "1")]) == 3)
        let sent = upstream.take()
        #expect(sent.map(\.symbol.rawValue) == ["AA", "BB", "AA"])
        hub.deliver(sent)
        #expect(hub.knownSymbols.map(\.rawValue) == ["AA", "BB"])
        #expect(hub.publish([F.tick("BB", "2"), F.tick("DD", "1")]) == 1)
        #expect(upstream.take().map(\.symbol.rawValue) == ["BB"])
        hub.close()
        #expect(hub.publish([F.tick("AA", "3")]) == 0)
        #expect(upstream.take().isEmpty)
    }
}

/// An upstream that keeps what it is given until the test hands it back to the hub.
final class HeldUpstream: PriceUpstream {
    private let held = Mutex<[PriceTick]>([])
    func publish(_ ticks: [PriceTick]) { held.withLock { $0 += ticks } }
    func take() -> [PriceTick] { held.withLock { state in defer { state = [] }; return state } }
}

final class SeenTicks: Sendable {
    private let state = Mutex<[PriceTick]>([])
    func append(_ ticks: [PriceTick]) { state.withLock { $0 += ticks } }
    var ticks: [PriceTick] { state.withLock { $0 } }
}
