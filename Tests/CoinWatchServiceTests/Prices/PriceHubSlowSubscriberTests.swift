import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Dispatch
import Synchronization
import Testing
@testable import CoinWatchService

/// A subscriber that stops reading holds at most one pending price per symbol and is ended after the deadline,
/// while the other streams go on.
@Suite(.timeLimit(.minutes(2)))
struct PriceHubSlowSubscriberTests {
    typealias F = PriceFixtures

    /// Many symbols make every flush large, so the stalled connection fills after few publishes.
    static let symbols = (0..<200).map { "S\(String($0).leftPadded(to: 3))" }
    static let parsedSymbols = symbols.map(F.symbol)

    /// One tick per symbol at `round + 0.5`.
    static func batch(_ round: Int) -> [PriceTick] {
        let price = ExactDecimal(mantissa: Int64(round) * 10 + 5, scale: 1)!
        return parsedSymbols.map { PriceTick(symbol: $0, price: price, timeMs: 1_700_000_000_000) }
    }

    @Test func stalledSubscriberIsConflatedThenEndedWhileOthersKeepReceiving() async throws {
        var configuration = PriceHub.Configuration()
        // Long enough that the publish loop below sees the stream parked before it is ended, even when a busy
        // machine pauses the test between a publish and the next statistics read.
        configuration.slowSubscriberTimeout = .seconds(5)
        let harness = try HubHarness(hub: configuration, server: { server in
            server.highWatermark = 32 << 10
            server.lowWatermark = 8 << 10
            // The connection-level limit must not close the connection before the hub ends the stream.
            server.slowConsumerTimeout = .seconds(60)
        })
        let stalled = try StalledSubscriber(port: harness.server.port)
        stalled.startStream(V1.StreamPricesRequest(symbols: Self.symbols))
        let client = try await harness.connect()
        let healthy = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["S000"]))
        #expect(await eventually { harness.hub.subscriberCount == 2 })

        // Publish until the stalled stream's connection is full and the hub parks it (bounded).
        var round = 0
        var parked = PriceHubStatistics()
        while round < 100_000 {
            round += 1
            harness.hub.publish(Self.batch(round))
            // Waiting for the loop each round lets every publish turn into a flush instead of conflating.
            parked = await harness.hub.statistics()
            if parked.waitingSubscribers > 0 { break }
        }
        #expect(parked.waitingSubscribers == 1)
        #expect(parked.maxPendingPerSubscriber <= Self.symbols.count)

        // Keep publishing while it is parked: what it holds stays one value per symbol.
        for _ in 0..<200 {
            round += 1
            harness.hub.publish(Self.batch(round))
        }
        let held = await harness.hub.statistics()
        #expect(held.maxPendingPerSubscriber <= Self.symbols.count)
        // The healthy stream may hold one pending update of its own.
        #expect(held.pendingUpdates <= Self.symbols.count + 1)

        // The healthy stream on its own connection is not held back.
        let lastRound = round
        #expect(await eventually { F.exact(healthy.last("S000")?.price) == F.price("\(lastRound).5") })

        // Past the deadline the stalled stream is ended and forgotten.
        #expect(await eventually { harness.hub.subscriberCount == 1 })
        let after = await harness.hub.statistics()
        #expect(after.slowSubscribersEnded == 1)
        #expect(after.subscribers == 1)
        #expect(!healthy.ended)

        // Reading now, the stalled client finds its stream's End: RESOURCE_EXHAUSTED with the reason.
        let (end, _) = stalled.read { frame in
            if case .end(let end) = frame.kind, end.callID == 1 { return true }
            return false
        }
        guard case .end(let frame)? = end?.kind else {
            Issue.record("no End frame for the stalled stream")
            await harness.shutdown()
            return
        }
        #expect(frame.status?.code.rawValue == RPCError.Code.resourceExhausted.rawValue)
        #expect(frame.status?.message.contains("did not keep up for 5 s") == true)
        #expect(frame.status?.message.contains("conflated to the latest per symbol") == true)
        stalled.close()
        await harness.shutdown()
    }

    @Test func subscriberThatCatchesUpGetsTheLatestValues() async throws {
        var configuration = PriceHub.Configuration()
        configuration.slowSubscriberTimeout = .seconds(60)
        let harness = try HubHarness(hub: configuration, server: { server in
            server.highWatermark = 32 << 10
            server.lowWatermark = 8 << 10
            server.slowConsumerTimeout = .seconds(60)
        })
        let stalled = try StalledSubscriber(port: harness.server.port)
        stalled.startStream(V1.StreamPricesRequest(symbols: Self.symbols))
        #expect(await eventually { harness.hub.subscriberCount == 1 })
        var round = 0
        while round < 100_000 {
            round += 1
            harness.hub.publish(Self.batch(round))
            if await harness.hub.statistics().waitingSubscribers > 0 { break }
        }
        #expect(await harness.hub.statistics().waitingSubscribers == 1)
        let final = "\(round + 1).25"
        harness.hub.publish(Self.symbols.map { F.tick($0, final) })

        // Draining the socket lets the hub flush the conflated slots: the last value of the last symbol arrives,
        // and sequence numbers never skip.
        var lastSequence: UInt64 = 0
        var gaps = 0
        let lastSymbol = Self.symbols.last!
        let (match, _) = stalled.read { frame in
            guard case .message(let message) = frame.kind,
                  let update = try? V1.PriceUpdate(serializedBytes: message.payload) else { return false }
            if update.sequence != lastSequence + 1 { gaps += 1 }
            lastSequence = update.sequence
            return update.symbol == lastSymbol && F.exact(update.price) == F.price(final)
        }
        #expect(match != nil)
        #expect(gaps == 0)
        #expect(await harness.hub.statistics().slowSubscribersEnded == 0)
        stalled.close()
        await harness.shutdown()
    }

    @Test func busyLoopHoldsOneValuePerSymbolNotAQueueOfBatches() async throws {
        let harness = try HubHarness()
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["S000", "S001"]))
        #expect(await eventually { harness.hub.subscriberCount == 1 })

        // Hold every server loop busy while the feed publishes 10,000 batches: far more ticks than a loop's mailbox
        // keeps in order, so it conflates them.
        let held = await harness.holdServerLoops()
        for round in 1...10_000 {
            harness.hub.publish(Array(Self.batch(round).prefix(2)))
        }
        let backlog = harness.hub.state.withLock { state in
            state.fanouts.map { fanout in fanout.mailbox.withLock { ($0.ticks.count, $0.isScheduled) } }
        }
        #expect(backlog.contains { $0 == (2, true) })
        #expect(backlog.allSatisfy { $0.0 <= 2 })
        held.release()

        // Once the loop runs again, the stream gets the latest values (not 10,000 of them).
        #expect(await eventually {
            F.exact(recorder.last("S000")?.price) == F.price("10000.5")
                && F.exact(recorder.last("S001")?.price) == F.price("10000.5")
        })
        #expect(recorder.updates.count <= 4)
        await harness.shutdown()
    }
}
