import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Dispatch
import Synchronization
import Testing
@testable import CoinWatchService

/// `StreamPrices` end to end: a real server, a real client, the hub in between.
@Suite(.timeLimit(.minutes(2)))
struct PriceHubStreamTests {
    typealias F = PriceFixtures

    @Test func snapshotComesFirstInSymbolOrderThenUpdates() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("ETH", "3450.25"), F.tick("BTC", "64250.5"), F.tick("SOL", "145.37")])
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["eth", "BTC"]))
        #expect(await eventually { recorder.updates.count >= 2 })
        harness.hub.publish([F.tick("BTC", "64251")])
        #expect(await eventually { recorder.updates.count >= 3 })

        let updates = recorder.updates
        #expect(updates.map(\.symbol) == ["BTC", "ETH", "BTC"])
        #expect(updates.map(\.sequence) == [1, 2, 3])
        #expect(F.exact(updates[0].price) == F.price("64250.5"))
        #expect(F.exact(updates[1].price) == F.price("3450.25"))
        #expect(F.exact(updates[2].price) == F.price("64251"))
        #expect(updates[0].sourceTimeMs == 1_700_000_000_000)
        #expect(!updates.contains { $0.symbol == "SOL" })
        // The snapshot is marked, and its last message says where it ends.
        #expect(updates.map(\.snapshot) == [true, true, false])
        #expect(updates.map(\.snapshotEnd) == [false, true, false])
        await harness.shutdown()
    }

    @Test func aStreamWhoseSymbolsHaveNoPriceHasNoSnapshotAndANeverSeenSymbolComesWhenPriced() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("BTC", "64250.5")])
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["NEWCOIN"]))
        #expect(await eventually { harness.hub.subscriberCount == 1 })
        harness.hub.publish([F.tick("NEWCOIN", "1.5")])
        #expect(await eventually { recorder.updates.count >= 1 })
        let first = recorder.updates[0]
        #expect(first.symbol == "NEWCOIN" && first.sequence == 1)
        #expect(!first.snapshot && !first.snapshotEnd, "the first message is live")
        await harness.shutdown()
    }

    @Test func republishingAnUnchangedPriceIsAnUpdateUnlessOnlyChanges() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("BTC", "100")])
        let client = try await harness.connect()
        let every = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC"]))
        let changes = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC"], onlyChanges: true))
        #expect(await eventually { every.updates.count == 1 && changes.updates.count == 1 })
        harness.hub.publish([F.tick("BTC", "100")])
        harness.hub.publish([F.tick("BTC", "101")])
        #expect(await eventually { every.updates.count == 3 && changes.updates.count == 2 })
        #expect(every.updates.compactMap { F.exact($0.price) } == ["100", "100", "101"].map(F.price))
        #expect(changes.updates.compactMap { F.exact($0.price) } == ["100", "101"].map(F.price))
        await harness.shutdown()
    }

    @Test func sequenceNumbersStayContiguousWhileValuesConflate() async throws {
        let harness = try HubHarness()
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC", "ETH"]))
        #expect(await eventually { harness.hub.subscriberCount == 1 })
        var last: [String: String] = [:]
        for step in 1...2_000 {
            let btc = "6\(String(step).leftPadded(to: 4)).5"
            let eth = "3\(String(step).leftPadded(to: 3)).25"
            harness.hub.publish([F.tick("BTC", btc)])
            harness.hub.publish([F.tick("ETH", eth)])
            last = ["BTC": btc, "ETH": eth]
        }
        #expect(await eventually {
            F.exact(recorder.last("BTC")?.price) == F.price(last["BTC"]!)
                && F.exact(recorder.last("ETH")?.price) == F.price(last["ETH"]!)
        })
        let updates = recorder.updates
        #expect(updates.map(\.sequence) == Array(1...UInt64(updates.count)))
        #expect(updates.count <= 4_000)
        // Per symbol, values only move forward: conflation skips values but never reorders them.
        for symbol in ["BTC", "ETH"] {
            let prices = updates.filter { $0.symbol == symbol }.compactMap { F.exact($0.price) }
            #expect(prices == prices.sorted())
        }
        await harness.shutdown()
    }

    @Test func streamThatKeepsUpGetsEveryTickInOrderEvenWhenItsLoopWasBusy() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("BTC", "60000")])
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC", "ETH"]))
        #expect(await eventually { recorder.updates.count >= 1 })

        // Hold the server loops while 300 single-tick batches arrive: the loop then drains them in one go.
        let held = await harness.holdServerLoops()
        for step in 1...150 {
            harness.hub.publish([F.tick("BTC", "\(60000 + step)")])
            harness.hub.publish([F.tick("ETH", "\(3000 + step)")])
        }
        held.release()

        #expect(await eventually { recorder.updates.count >= 301 })
        let updates = recorder.updates
        #expect(updates.count == 301)
        #expect(updates.map(\.sequence) == Array(1...301))
        let live = Array(updates.dropFirst())
        func prices(_ symbol: String) -> [ExactDecimal] {
            live.filter { $0.symbol == symbol }.compactMap { F.exact($0.price) }
        }
        #expect(prices("BTC") == (1...150).map { F.price("\(60000 + $0)") })
        #expect(prices("ETH") == (1...150).map { F.price("\(3000 + $0)") })
        // Publish order across symbols is kept too.
        #expect(live.map(\.symbol) == Array(repeating: ["BTC", "ETH"], count: 150).flatMap { $0 })
        await harness.shutdown()
    }

    @Test func minIntervalCoalescesAndDeliversTheLastValue() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("BTC", "60000"), F.tick("ETH", "3000")])
        let client = try await harness.connect()
        let recorder = UpdateRecorder(
            client: client, request: V1.StreamPricesRequest(symbols: ["BTC", "ETH"], minIntervalMs: 100))
        #expect(await eventually { recorder.updates.count >= 2 })
        for step in 1...50 {
            harness.hub.publish([F.tick("BTC", "\(60000 + step)"), F.tick("ETH", "\(3000 + step)")])
        }
        #expect(await eventually {
            F.exact(recorder.last("BTC")?.price) == F.price("60050")
                && F.exact(recorder.last("ETH")?.price) == F.price("3050")
        })
        let updates = recorder.updates
        // 2 snapshot messages, then far fewer than the 100 published ticks: whole intervals' worth were conflated.
        #expect(updates.count < 2 + 20)
        #expect(updates.map(\.sequence) == Array(1...UInt64(updates.count)))
        await harness.shutdown()
    }

    @Test func onlyChangesDropsRepeatedPrices() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("BTC", "64250.5")])
        let client = try await harness.connect()
        let recorder = UpdateRecorder(
            client: client, request: V1.StreamPricesRequest(symbols: ["BTC"], onlyChanges: true))
        #expect(await eventually { recorder.updates.count >= 1 })
        harness.hub.publish([F.tick("BTC", "64250.50", timeMs: 1_700_000_000_001)])
        harness.hub.publish([F.tick("BTC", "64250.5", timeMs: 1_700_000_000_002)])
        harness.hub.publish([F.tick("BTC", "64251")])
        #expect(await eventually { F.exact(recorder.last("BTC")?.price) == F.price("64251") })
        // A stream without only_changes on the same hub sees the repeats too.
        let plain = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC"]))
        #expect(await eventually { plain.updates.count >= 1 })
        harness.hub.publish([F.tick("BTC", "64251")])
        #expect(await eventually { plain.updates.count >= 2 })
        harness.hub.publish([F.tick("BTC", "64252")])
        #expect(await eventually { F.exact(recorder.last("BTC")?.price) == F.price("64252") })

        let prices = recorder.updates.compactMap { F.exact($0.price) }
        #expect(prices == [F.price("64250.5"), F.price("64251"), F.price("64252")])
        #expect(recorder.updates.map(\.sequence) == [1, 2, 3])
        await harness.shutdown()
    }

    @Test func allSymbolsStreamSeesSymbolsThatAppearLater() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("BTC", "64250.5")])
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest())
        #expect(await eventually { recorder.updates.count >= 1 })
        harness.hub.publish([F.tick("DOGE", "0.16235")])
        harness.hub.publish([F.tick("XRP", "0.5234"), F.tick("BTC", "64260")])
        #expect(await eventually { recorder.last("XRP") != nil && recorder.last("DOGE") != nil })
        #expect(await eventually { F.exact(recorder.last("BTC")?.price) == F.price("64260") })

        let updates = recorder.updates
        #expect(updates.first?.symbol == "BTC")
        #expect(F.exact(recorder.last("DOGE")?.price) == F.price("0.16235"))
        #expect(F.exact(recorder.last("XRP")?.price) == F.price("0.5234"))
        #expect(updates.map(\.sequence) == Array(1...UInt64(updates.count)))
        await harness.shutdown()
    }

    @Test func streamForASymbolWithoutPriceWaitsForItsFirstTick() async throws {
        let harness = try HubHarness()
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["ADA"]))
        #expect(await eventually { harness.hub.subscriberCount == 1 })
        harness.hub.publish([F.tick("BTC", "1"), F.tick("ADA", "0.4521")])
        #expect(await eventually { recorder.updates.count >= 1 })
        #expect(recorder.updates.map(\.symbol) == ["ADA"])
        #expect(recorder.updates.first?.sequence == 1)
        await harness.shutdown()
    }

    @Test func cancelledAndDisconnectedStreamsAreRemoved() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("BTC", "64250.5")])
        let client = try await harness.connect()
        let cancelled = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC"]))
        let other = try await harness.connect()
        let disconnected = UpdateRecorder(client: other, request: V1.StreamPricesRequest())
        #expect(await eventually { cancelled.updates.count == 1 && disconnected.updates.count == 1 })
        #expect(harness.hub.subscriberCount == 2)

        cancelled.cancel()
        #expect(await eventually { harness.hub.subscriberCount == 1 })
        other.close()
        #expect(await eventually { harness.hub.subscriberCount == 0 })

        // Publishing after both left reaches nobody and breaks nothing; a new stream still works.
        harness.hub.publish([F.tick("BTC", "64251")])
        let again = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC"]))
        #expect(await eventually { F.exact(again.last("BTC")?.price) == F.price("64251") })
        let statistics = await harness.hub.statistics()
        #expect(statistics.subscribers == 1)
        await harness.shutdown()
    }

    @Test func abandoningTheAsyncIteratorCancelsTheStream() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("BTC", "64250.5")])
        let client = try await harness.connect()
        do {
            let stream = client.serverStream(V1.CoinWatch.streamPrices, V1.StreamPricesRequest(symbols: ["BTC"]))
            for try await update in stream {
                #expect(update.sequence == 1)
                break
            }
        }
        #expect(await eventually { harness.hub.subscriberCount == 0 })
        await harness.shutdown()
    }

    @Test func closingTheHubEndsStreamsUnavailable() async throws {
        let harness = try HubHarness()
        harness.hub.publish([F.tick("BTC", "64250.5")])
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC"]))
        #expect(await eventually { recorder.updates.count == 1 })
        harness.hub.close()
        #expect(await eventually { recorder.ended })
        #expect(recorder.error?.code == .unavailable)
        #expect(harness.hub.publish([F.tick("BTC", "1")]) == 0)
        let late = UpdateRecorder(client: client, request: V1.StreamPricesRequest(symbols: ["BTC"]))
        #expect(await eventually { late.ended })
        #expect(late.error?.code == .unavailable)
        await harness.shutdown()
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
