import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// Closing the service and reopening it on the same database keeps the outbox and every side's arm state: nothing
/// fires twice and nothing armed is lost.
@Suite(.timeLimit(.minutes(2)))
struct AlertRestartTests {
    @Test func theOutboxAndArmStatesSurviveARestart() async throws {
        try await withTemporaryDirectory(prefix: "alert-restart") { directory in
            let path = databasePath(in: directory)
            let pending: V1.Alert
            do {
                let harness = try AlertServiceHarness(path: path)
                try await harness.save("device-a", ["BTC": rule(below: "4000", above: "5000")])
                try await harness.save("device-b", ["BTC": rule(above: "5100")])
                harness.publish("BTC", "4900")  // first price: every side armed
                harness.publish("BTC", "5012.3")  // device-a above fires, nobody listens
                #expect(await harness.waitForOutbox { $0.count == 1 })
                pending = try #require(try harness.outbox().first)
                await harness.shutdown()
            }

            let harness = try AlertServiceHarness(path: path)
            // Saved while the price (5012.3, restored) is already past it: starts disarmed.
            try await harness.save("device-c", ["BTC": rule(above: "5000")])
            let client = try await harness.connect()
            let a = AlertRecorder(client: client, device: "device-a")
            let b = AlertRecorder(client: client, device: "device-b")
            let c = AlertRecorder(client: client, device: "device-c")
            #expect(await harness.waitForSubscribers(3))
            #expect(await a.waitForCount(1))
            #expect(a.alerts.first?.id == pending.id)
            #expect(a.alerts.first?.idempotencyKey == pending.idempotencyKey)

            harness.publish("BTC", "5050")  // device-a above has fired and not re-armed; device-c saved past it
            harness.publish("BTC", "5100")  // device-b above stayed armed: fires once
            harness.publish("BTC", "5150")
            harness.publish("BTC", "3990")  // device-a below, armed since the first price
            #expect(await a.waitForCount(2))
            #expect(await b.waitForCount(1))
            // device-a's below alert came from the last tick, so every earlier tick was evaluated before it.
            #expect(harness.stats.alertsFired == 2)
            #expect(a.summaries == ["BTC above 5000 @ 5012.3", "BTC below 4000 @ 3990"])
            #expect(b.summaries == ["BTC above 5100 @ 5100"])
            #expect(c.count == 0)
            await harness.shutdown()
        }
    }

    /// A batch of ticks interleaving symbols leaves each symbol's last price in the store, where a restarted
    /// engine resumes from it.
    @Test func everySymbolsLastPriceInABatchIsStored() async throws {
        try await withTemporaryDirectory(prefix: "alert-last-prices") { directory in
            let path = databasePath(in: directory)
            let ticks = [("BTC", "100"), ("ETH", "200"), ("BTC", "300"), ("ETH", "250"), ("ETH", "260"), ("SOL", "5")]
            do {
                let harness = try AlertServiceHarness(path: path)
                #expect(harness.service.hub.publish(ticks.map { PriceFixtures.tick($0.0, $0.1) }) == ticks.count)
                #expect(await harness.waitForEvaluated(ticks.count))
                await harness.shutdown()
            }
            let database = try Database(path: path)
            defer { database.close() }
            let stored = try AlertStorage.loadPricesAndClock(database).lastPrices
            let expected = try [("BTC", 300), ("ETH", 260), ("SOL", 5)].map { (try Symbol(validating: $0.0), ExactDecimal($0.1)) }
            #expect(stored == Dictionary(uniqueKeysWithValues: expected))
        }
    }

    @Test func aSideKeepsItsFiredStateAcrossARestartWhenTheOtherSideOfItsRuleChanged() async throws {
        try await withTemporaryDirectory(prefix: "alert-restart") { directory in
            let path = databasePath(in: directory)
            do {
                let harness = try AlertServiceHarness(path: path)
                try await harness.save("device-a", ["BTC": rule(below: "4000", above: "5000")])
                harness.publish("BTC", "4900")
                harness.publish("BTC", "5012.3")  // above fires
                harness.publish("BTC", "4990")  // below the threshold but inside the band (> 4975): still fired
                // Only the below side changes; the above side keeps its threshold and so its state.
                try await harness.save("device-a", ["BTC": rule(below: "3900", above: "5000")])
                #expect(await harness.waitForFired(1))
                await harness.shutdown()
            }

            let harness = try AlertServiceHarness(path: path)
            let client = try await harness.connect()
            let a = AlertRecorder(client: client, device: "device-a")
            #expect(await harness.waitForSubscribers(1))
            harness.publish("BTC", "5001")  // must not fire: the above side never came back through the band
            harness.publish("BTC", "3800")  // the new below side, armed against 4990 when saved
            #expect(await a.waitForCount(2))
            #expect(a.summaries == ["BTC above 5000 @ 5012.3", "BTC below 3900 @ 3800"])
            #expect(harness.stats.alertsFired == 1)
            await harness.shutdown()
        }
    }
}
