import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Testing
import FoundationEssentials
@testable import CoinWatchService

/// Last prices survive a restart through LevelDB (`price:<SYMBOL>` → `coinwatch.v1.Tick`).
@Suite(.timeLimit(.minutes(2)))
struct PriceHubPersistenceTests {
    typealias F = PriceFixtures

    static func storedTicks(_ database: Database) throws -> [String: V1.Tick] {
        var result: [String: V1.Tick] = [:]
        for entry in try database.scan(prefix: Array("price:".utf8)) {
            result[String(decoding: entry.key, as: UTF8.self)] = try V1.Tick(serializedBytes: entry.value)
        }
        return result
    }

    @Test func closeWritesLastPricesAndANewHubServesThemAtOnce() async throws {
        let directory = try TemporaryDirectory(prefix: "price-persist")
        let path = directory.appending("db").path
        do {
            let database = try Database(path: path)
            var configuration = PriceHub.Configuration()
            configuration.persistInterval = .seconds(3600)
            let hub = try PriceHub(configuration: configuration, database: database)
            hub.publish([F.tick("BTC", "64250.5"), F.tick("ETH", "3450.25")])
            hub.publish([F.tick("BTC", "64251.75", timeMs: 1_700_000_000_500)])
            hub.close()
            #expect(try Self.storedTicks(database).keys.sorted() == ["price:BTC", "price:ETH"])
            database.close()
        }
        let database = try Database(path: path)
        let harness = try HubHarness(database: database)
        #expect(harness.hub.loadReport.prices.count == 2)
        #expect(harness.hub.loadReport.skipped.isEmpty)
        let snapshot = harness.hub.snapshot()
        #expect(snapshot.map(\.symbol) == ["BTC", "ETH"])
        #expect(F.exact(snapshot[0].price) == F.price("64251.75"))
        #expect(snapshot[0].timeMs == 1_700_000_000_500)

        // A stream started right after the restart gets the stored prices as its snapshot, before any tick.
        let client = try await harness.connect()
        let recorder = UpdateRecorder(client: client, request: V1.StreamPricesRequest())
        #expect(await eventually { recorder.updates.count >= 2 })
        #expect(recorder.updates.map(\.symbol) == ["BTC", "ETH"])
        #expect(F.exact(recorder.updates[1].price) == F.price("3450.25"))
        await harness.shutdown()
        database.close()
    }

    @Test func changedPricesAreWrittenInTheBackground() async throws {
        let directory = try TemporaryDirectory(prefix: "price-persist")
        let database = try Database(path: directory.appending("db").path)
        var configuration = PriceHub.Configuration()
        configuration.persistInterval = .milliseconds(20)
        let hub = try PriceHub(configuration: configuration, database: database)
        hub.publish([F.tick("SOL", "145.37")])
        #expect(await eventually { (try? Self.storedTicks(database))?["price:SOL"] != nil })
        hub.publish([F.tick("SOL", "146")])
        #expect(await eventually {
            F.exact((try? Self.storedTicks(database))?["price:SOL"]?.price) == F.price("146")
        })
        hub.close()
        database.close()
    }

    @Test func unusableStoredEntriesAreSkippedAndReported() throws {
        let directory = try TemporaryDirectory(prefix: "price-persist")
        let database = try Database(path: directory.appending("db").path)
        try database.put(
            Array("price:BTC".utf8), V1.Tick(symbol: "BTC", price: F.wire("64250.5"), timeMs: 5).serializedBytes())
        try database.put(Array("price:ETH".utf8), [0xFF, 0xFF, 0xFF])
        try database.put(
            Array("price:SOL".utf8), V1.Tick(symbol: "SOL", price: V1.Decimal(mantissa: -1)).serializedBytes())
        try database.put(Array("price:XRP".utf8), V1.Tick(symbol: "DOGE", price: F.wire("1")).serializedBytes())
        try database.put(Array("settings:x".utf8), [1, 2, 3])
        let hub = try PriceHub(database: database)
        #expect(hub.knownSymbols.map(\.rawValue) == ["BTC"])
        #expect(hub.loadReport.skipped.count == 3)
        #expect(hub.loadReport.skipped.contains { $0.hasPrefix("price:ETH: not a coinwatch.v1.Tick") })
        #expect(hub.loadReport.skipped.contains("price:SOL.price: must be greater than 0 (got -1)"))
        #expect(hub.loadReport.skipped.contains("price:XRP: holds a tick for DOGE"))
        hub.close()
        database.close()
    }

    @Test func hubWithoutDatabaseKeepsPricesInMemoryOnly() {
        let hub = try! PriceHub()
        hub.publish([F.tick("BTC", "1")])
        #expect(hub.loadReport == PriceLoadReport())
        #expect(hub.latestPrice(of: F.symbol("BTC"))?.price == F.price("1"))
        hub.close()
    }
}
