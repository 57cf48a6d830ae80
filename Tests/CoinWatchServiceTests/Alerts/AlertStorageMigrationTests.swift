import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// Schema version 1 stores (arm states as per-side text records) open as version 2 with every state kept, and what
/// start-up reads from `alert:arm:` records — damaged ones included — never fires twice or stops the server.
@Suite(.timeLimit(.minutes(2)))
struct AlertStorageMigrationTests {
    static func put(_ database: Database, _ key: String, _ value: String) throws {
        try database.put(Array(key.utf8), Array(value.utf8))
    }

    static func putSettings(_ database: Database, _ id: String, _ rules: [String: V1.AlertRule]) throws {
        let settings = V1.Settings(deviceID: id, rules: rules, version: 1, updatedAtMs: 1_700_000_000_000)
        try database.put(StorageLayout.settingsKey(id), settings.serializedBytes())
    }

    static func putTextState(
        _ database: Database, _ id: String, _ direction: AlertDirection, _ threshold: String, _ state: ArmState
    ) throws {
        let record = ArmStateRecord(
            device: try DeviceID(validating: id), symbol: try Symbol(validating: "BTC"), direction: direction,
            threshold: ExactDecimal(threshold)!, state: state
        )
        try database.put(AlertStorage.stateKey(record.device, record.symbol, record.direction), AlertStorage.encodeText(record))
    }

    /// The sides stored in the device's `alert:arm:` record, by direction.
    static func armRecord(_ database: Database, _ id: String) throws -> [AlertDirection: ArmStateRecord] {
        let device = try DeviceID(validating: id)
        let key = AlertStorage.armKey(device)
        let value = try #require(try database.get(key))
        var sides: [AlertDirection: ArmStateRecord] = [:]
        for record in try decodeArmRecord(value, key: key, device: device) {
            sides[record.direction] = record
        }
        return sides
    }

    /// A version 1 store: device-a's `above 5000` fired and has not re-armed, its `below 4000` and device-b's
    /// `above 5100` are armed; BTC was last at 5012.3. device-z has a text record that does not parse.
    static func writeVersion1Store(at path: String) throws {
        let database = try Database(path: path)
        defer { database.close() }
        try put(database, "meta:schema", "1")
        try putSettings(database, "device-a", ["BTC": rule(below: "4000", above: "5000")])
        try putSettings(database, "device-b", ["BTC": rule(above: "5100")])
        try put(database, "alert:last:BTC", "5012.3")
        try put(database, "alert:clock", "7")
        try putTextState(database, "device-a", .above, "5000", .disarmed)
        try putTextState(database, "device-a", .below, "4000", .armed(generation: 3))
        try putTextState(database, "device-b", .above, "5100", .armed(generation: 3))
        try database.put(Array("alert:state:device-z\0BTC\0above".utf8), Array("not a state".utf8))
    }

    @Test func aVersion1StoreIsMigratedAndKeepsEveryArmState() async throws {
        try await withTemporaryDirectory(prefix: "alert-migration") { directory in
            let path = databasePath(in: directory)
            try Self.writeVersion1Store(at: path)

            let harness = try AlertServiceHarness(path: path)
            #expect(try harness.database.get(StorageLayout.schemaKey) == Array("2".utf8))
            #expect(try harness.database.scan(prefix: AlertStorage.statePrefix).isEmpty)
            let a = try Self.armRecord(harness.database, "device-a")
            #expect(a[.above]?.state == .disarmed)
            #expect(a[.above]?.threshold == ExactDecimal(5000))
            #expect(a[.below]?.state == .armed(generation: 3))
            #expect(try Self.armRecord(harness.database, "device-b")[.above]?.state == .armed(generation: 3))
            #expect(try harness.database.get(AlertStorage.armKey(try DeviceID(validating: "device-z"))) == nil)

            let client = try await harness.connect()
            let recorderA = AlertRecorder(client: client, device: "device-a")
            let recorderB = AlertRecorder(client: client, device: "device-b")
            #expect(await harness.waitForSubscribers(2))
            harness.publish("BTC", "5050")  // device-a above fired before the migration: must not fire again
            harness.publish("BTC", "5100")  // device-b above, armed: fires once
            harness.publish("BTC", "3990")  // device-a below, armed: fires
            #expect(await recorderA.waitForCount(1))
            #expect(await recorderB.waitForCount(1))
            #expect(recorderA.summaries == ["BTC below 4000 @ 3990"])
            #expect(recorderB.summaries == ["BTC above 5100 @ 5100"])
            #expect(harness.stats.alertsFired == 2)
            await harness.shutdown()

            // Reopening a migrated store changes nothing.
            let again = try AlertServiceHarness(path: path)
            #expect(try again.database.get(StorageLayout.schemaKey) == Array("2".utf8))
            // device-a's above side re-armed at 3990 (inside no band any more) and was stored so.
            let reopened = try #require(try Self.armRecord(again.database, "device-a")[.above])
            guard case .armed = reopened.state else {
                Issue.record("device-a above is \(reopened.state) after the restart")
                await again.shutdown()
                return
            }
            await again.shutdown()
        }
    }

    @Test func aMigrationCutShortFinishesAtTheNextOpen() throws {
        try withTemporaryDirectory(prefix: "alert-migration") { directory in
            let database = try Database(path: databasePath(in: directory))
            defer { database.close() }
            try Self.put(database, "meta:schema", "1")
            // device-a was migrated before the interruption; device-b and device-c were not.
            let a = try DeviceID(validating: "device-a")
            let btc = try Symbol(validating: "BTC")
            let migrated = ArmStateRecord(device: a, symbol: btc, direction: .above, threshold: ExactDecimal(5000), state: .disarmed)
            try database.put(AlertStorage.armKey(a), ArmRecordCoding.encode([migrated]))
            try Self.putTextState(database, "device-b", .above, "5100", .armed(generation: 4))
            try Self.putTextState(database, "device-b", .below, "4100", .disarmed)
            try Self.putTextState(database, "device-c", .below, "3000", .awaitingPrice)

            let report = try AlertStorage.migrateTextArmStates(database, devicesPerBatch: 1)
            #expect(report == AlertStorage.MigrationReport(devices: 2, unreadable: 0))
            #expect(try database.scan(prefix: AlertStorage.statePrefix).isEmpty)
            #expect(try Self.armRecord(database, "device-a")[.above] == migrated)
            let b = try Self.armRecord(database, "device-b")
            #expect(b[.above]?.state == .armed(generation: 4))
            #expect(b[.below]?.state == .disarmed)
            #expect(try Self.armRecord(database, "device-c")[.below]?.state == .awaitingPrice)

            // The service's preparation raises the version once the rest is migrated.
            try CoinWatchService.prepareStorage(database)
            #expect(try database.get(StorageLayout.schemaKey) == Array("2".utf8))
        }
    }

    @Test func aDamagedArmRecordIsComputedAfreshAndRewritten() async throws {
        try await withTemporaryDirectory(prefix: "alert-migration") { directory in
            let path = databasePath(in: directory)
            do {
                let database = try Database(path: path)
                defer { database.close() }
                try Self.put(database, "meta:schema", "2")
                try Self.putSettings(database, "device-a", ["BTC": rule(above: "5000")])
                try Self.put(database, "alert:last:BTC", "4900")
                try database.put(Array("alert:arm:device-a".utf8), [1, 3, 0x42, 0x54, 0x43, 9])
                // A damaged record of a device that has no rule any more.
                try database.put(Array("alert:arm:device-gone".utf8), [7])
            }
            let harness = try AlertServiceHarness(path: path)
            #expect(try harness.database.get(Array("alert:arm:device-gone".utf8)) == nil)
            // Armed against 4900 (below 5000) at a new clock tick, and stored in the current format.
            let side = try #require(try Self.armRecord(harness.database, "device-a")[.above])
            #expect(side.state == .armed(generation: 1))
            let client = try await harness.connect()
            let recorder = AlertRecorder(client: client, device: "device-a")
            #expect(await harness.waitForSubscribers(1))
            harness.publish("BTC", "5001")
            #expect(await recorder.waitForCount(1))
            #expect(recorder.summaries == ["BTC above 5000 @ 5001"])
            await harness.shutdown()
        }
    }

    @Test func aSaveBetweenTheSettingsLoadAndTheAlertServiceReachesTheIndex() async throws {
        try await withTemporaryDirectory(prefix: "alert-migration") { directory in
            let database = try Database(path: databasePath(in: directory))
            defer { database.close() }
            try Self.put(database, "alert:last:BTC", "4900")
            try Self.putSettings(database, "device-a", ["BTC": rule(above: "5000")])
            var rulesAtLoad: [RuleRecord] = []
            let settings = try SettingsStore(database: database) { rulesAtLoad.append(AlertStorage.ruleRecord($0, $1)) }
            _ = try await settings.save(V1.SaveSettingsRequest(deviceID: "device-b", setRules: ["BTC": rule(below: "4000")]))
            // The rules collected at load miss device-b: the service must notice and read them again.
            let alerts = try AlertService(database: database, settings: settings, armStates: nil, rulesAtLoad: rulesAtLoad)
            // Both devices' sides were placed against the last price and persisted at load.
            #expect(try Self.armRecord(database, "device-a")[.above]?.state == .armed(generation: 1))
            #expect(try Self.armRecord(database, "device-b")[.below]?.state == .armed(generation: 1))
            alerts.close()
            settings.close()
        }
    }
}
