@testable import CoinWatchService
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import CoinWatchTestSupport
import Testing
import Synchronization

/// The in-place reading of stored settings records: it accepts what the encoder writes, anything it accepts decodes
/// to a message that encodes back to the same bytes, and the store answers the same for records it does not accept.
@Suite("SettingsRecord")
struct SettingsRecordTests {
    static func randomSettings(_ random: inout SplitMix64, id: String) -> V1.Settings {
        let symbols = ["BTC", "ETH", "SOL", "X2", "ABCDEFGHIJ", "DOGE"]
        var settings = V1.Settings(deviceID: id)
        for symbol in symbols where random.next() % 2 == 0 {
            func side() -> V1.Decimal? {
                switch random.next() % 4 {
                case 0: nil
                case 1: V1.Decimal(mantissa: 0, scale: 0)
                default:
                    V1.Decimal(
                        mantissa: Int64(bitPattern: random.next()) >> (random.next() % 63),
                        scale: UInt32(random.next() % 19)
                    )
                }
            }
            settings.rules[symbol] = V1.AlertRule(below: side(), above: side())
        }
        settings.version = random.next() % 3 == 0 ? 0 : random.next() >> (random.next() % 64)
        settings.updatedAtMs = random.next() % 3 == 0 ? 0 : Int64(bitPattern: random.next())
        return settings
    }

    /// Scans `bytes` for `id`, returning the rules it reported when it accepted them.
    static func scan(_ bytes: [UInt8], id: String) -> [String: V1.AlertRule]? {
        var rules: [String: V1.AlertRule] = [:]
        let accepted = bytes.withUnsafeBytes { record in
            Array(id.utf8).withUnsafeBytes { idBytes in
                SettingsRecord.scan(record, deviceID: idBytes) { symbol, below, above in
                    rules[String(decoding: symbol, as: UTF8.self)] = V1.AlertRule(
                        below: below.map { V1.Decimal(mantissa: $0.mantissa, scale: UInt32($0.scale)) },
                        above: above.map { V1.Decimal(mantissa: $0.mantissa, scale: UInt32($0.scale)) }
                    )
                }
            }
        }
        return accepted ? rules : nil
    }

    @Test("every record the encoder writes is accepted, with its rules and its GetSettings response")
    func encoderOutputAccepted() throws {
        var random = SplitMix64(seed: 0x5E77)
        for round in 0..<1000 {
            let id = round % 2 == 0 ? "phone-\(round)" : "3f2504e0-4f89-11d3-9a0c-0305e82c33\(round % 90 + 10)"
            let settings = Self.randomSettings(&random, id: id)
            let bytes = settings.serializedBytes()
            let rules = try #require(Self.scan(bytes, id: id), "\(settings) not accepted")
            #expect(rules == settings.rules)
            let response = bytes.withUnsafeBytes { SettingsRecord.encodedResponse(wrapping: $0) }
            #expect(response == V1.GetSettingsResponse(settings: settings).serializedBytes())
            #expect(Self.scan(bytes, id: id + "x") == nil)
        }
    }

    @Test("whatever the scan accepts decodes and encodes back to the same bytes")
    func acceptedIsCanonical() throws {
        var random = SplitMix64(seed: 0xB17F11)
        var accepted = 0
        for round in 0..<300 {
            let id = "phone-\(round)"
            let valid = Self.randomSettings(&random, id: id).serializedBytes()
            var variants: [[UInt8]] = (0..<valid.count).map { Array(valid.prefix($0)) }
            for _ in 0..<40 {
                var damaged = valid
                let position = Int(random.next() % UInt64(damaged.count))
                switch random.next() % 3 {
                case 0: damaged[position] ^= UInt8(1 << (random.next() % 8))
                case 1: damaged.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
                default: damaged.remove(at: position)
                }
                variants.append(damaged)
            }
            for bytes in variants {
                guard let rules = Self.scan(bytes, id: id) else { continue }
                accepted += 1
                let decoded = try V1.Settings(serializedBytes: bytes)
                #expect(decoded.serializedBytes() == bytes)
                #expect(decoded.rules == rules)
                #expect(decoded.deviceID == id)
            }
        }
        #expect(accepted > 0)
    }

    @Test("records in another form are not read in place")
    func nonCanonicalRejected() {
        let id = "phone-1"
        var unknownField = V1.Settings(deviceID: id, version: 1).serializedBytes()
        unknownField += [0x28, 0x01]  // field 5, varint
        #expect(Self.scan(unknownField, id: id) == nil)
        // Rules out of symbol order: ETH's entry first.
        let btc: [UInt8] = [0x12, 0x07, 0x0A, 0x03, 0x42, 0x54, 0x43, 0x12, 0x00]
        let eth: [UInt8] = [0x12, 0x07, 0x0A, 0x03, 0x45, 0x54, 0x48, 0x12, 0x00]
        let header: [UInt8] = [0x0A, 0x07] + Array(id.utf8)
        #expect(Self.scan(header + btc + eth, id: id) != nil)
        #expect(Self.scan(header + eth + btc, id: id) == nil)
        // A lower-case symbol, a non-minimal version varint, a zero version written out.
        let lower: [UInt8] = [0x12, 0x07, 0x0A, 0x03, 0x62, 0x74, 0x63, 0x12, 0x00]
        #expect(Self.scan(header + lower, id: id) == nil)
        #expect(Self.scan(header + [0x18, 0x81, 0x00], id: id) == nil)
        #expect(Self.scan(header + [0x18, 0x00], id: id) == nil)
        #expect(Self.scan(header + [0x18, 0x01], id: id) != nil)
    }

    @Test("a store answers the same for records read in place and records decoded", arguments: [false, true])
    func storeAnswersBothForms(withUnknownField: Bool) async throws {
        try await withTemporaryDirectory(prefix: "settings-test") { directory in
            let path = databasePath(in: directory)
            let settings = V1.Settings(
                deviceID: "phone-1", rules: ["BTC": rule(below: "60000.5", above: "70000")], version: 3,
                updatedAtMs: 1_700_000_000_000
            )
            do {
                let database = try Database(path: path)
                defer { database.close() }
                var bytes = settings.serializedBytes()
                if withUnknownField { bytes += [0x28, 0x01] }
                try database.put(StorageLayout.settingsKey("phone-1"), bytes)
            }
            try withReopenedStore(at: path) { store, _ in
                let request = V1.GetSettingsRequest(deviceID: "phone-1")
                #expect(try store.getSettings(request).get() == settings)
                let encoded = try store.getSettingsEncoded(request).get()
                #expect(encoded == V1.GetSettingsResponse(settings: settings).serializedBytes())
                #expect(store.allSettings() == [settings])
            }
            // The load hook and a later read of the records in memory see the same rules, in either form.
            let expected = [
                RuleVisit(
                    device: try device("phone-1"),
                    rule: StoredRule(
                        symbol: try Symbol(validating: "BTC"), below: ExactDecimal("60000.5"), above: ExactDecimal(70000)
                    )
                ),
            ]
            let database = try Database(path: path)
            defer { database.close() }
            var loaded: [RuleVisit] = []
            let store = try SettingsStore(database: database) { loaded.append(RuleVisit(device: $0, rule: $1)) }
            defer { store.close() }
            #expect(loaded == expected)
            var read: [RuleVisit] = []
            store.forEachRule { read.append(RuleVisit(device: $0, rule: $1)) }
            #expect(read == expected)
            store.observeChangesSinceLoad({ #expect(!$0) }, onChange: { _ in })
            // A save over a record read in place starts from its decoded settings.
            let saved = try await store.save(V1.SaveSettingsRequest(deviceID: "phone-1", setRules: ["ETH": rule(above: "4000")]))
            #expect(saved.version == 4)
            #expect(Set(saved.rules.keys) == ["BTC", "ETH"])
            store.observeChangesSinceLoad({ #expect($0) }, onChange: { _ in })
        }
    }
}

/// One call of a rule visitor.
private struct RuleVisit: Hashable {
    let device: DeviceID
    let rule: StoredRule
}
