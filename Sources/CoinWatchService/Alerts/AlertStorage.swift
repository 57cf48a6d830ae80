import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore

/// The alert engine's records in LevelDB (see docs/STORAGE.md):
///
/// | key | value |
/// |---|---|
/// | `alert:arm:<device>` | every rule side of the device with its arm state, binary (`ArmRecordCoding`) |
/// | `alert:last:<symbol>` | the last price the engine evaluated, decimal text |
/// | `alert:clock` | the engine clock, decimal text |
/// | `outbox:<device>\0<symbol>` | the newest undelivered `coinwatch.v1.Alert` for that device and symbol |
///
/// Schema version 1 kept arm states as one text record per side under `alert:state:`; opening such a store
/// rewrites them (`migrations`).
enum AlertStorage {
    static let armPrefix = Array("alert:arm:".utf8)
    /// Schema version 1's per-side text records, read only by the migration.
    static let statePrefix = Array("alert:state:".utf8)
    static let lastPrefix = Array("alert:last:".utf8)
    static let clockKey = Array("alert:clock".utf8)
    static let outboxPrefix = Array("outbox:".utf8)

    static func armKey(_ device: DeviceID) -> [UInt8] { armPrefix + Array(device.rawValue.utf8) }

    /// Schema version 1's key of one side's text record.
    static func stateKey(_ device: DeviceID, _ symbol: Symbol, _ direction: AlertDirection) -> [UInt8] {
        statePrefix + Array(device.rawValue.utf8) + [0] + Array(symbol.rawValue.utf8) + [0] + Array(direction.rawValue.utf8)
    }

    static func lastKey(_ symbol: Symbol) -> [UInt8] { lastPrefix + Array(symbol.rawValue.utf8) }

    static func outboxKey(_ device: DeviceID, _ symbol: Symbol) -> [UInt8] {
        outboxDevicePrefix(device) + Array(symbol.rawValue.utf8)
    }

    static func outboxDevicePrefix(_ device: DeviceID) -> [UInt8] { outboxPrefix + Array(device.rawValue.utf8) + [0] }

    /// The device and symbol of an outbox key (`outboxKey`'s inverse), or nil for a key that is not one.
    static func outboxParts(_ key: [UInt8]) -> (DeviceID, Symbol)? {
        guard key.starts(with: outboxPrefix) else { return nil }
        let rest = key.dropFirst(outboxPrefix.count)
        guard let separator = rest.firstIndex(of: 0),
              let device = try? DeviceID(validating: String(decoding: rest[..<separator], as: UTF8.self)),
              let symbol = try? Symbol(validating: String(decoding: rest[(separator + 1)...], as: UTF8.self))
        else { return nil }
        return (device, symbol)
    }

    /// Schema version 1's text value of one side, as the migration reads it.
    static func encodeText(_ record: ArmStateRecord) -> [UInt8] {
        switch record.state {
        case .armed(let generation): Array("\(record.threshold) armed \(generation)".utf8)
        case .disarmed: Array("\(record.threshold) disarmed".utf8)
        case .awaitingPrice: Array("\(record.threshold) awaiting".utf8)
        }
    }

    /// Parses a schema version 1 text record; nil for anything malformed (the engine then recomputes that side).
    static func decodeTextState(key: [UInt8], value: [UInt8]) -> ArmStateRecord? {
        let parts = key.dropFirst(statePrefix.count).split(separator: 0, omittingEmptySubsequences: false)
        guard parts.count == 3,
              let device = try? DeviceID(validating: String(decoding: parts[0], as: UTF8.self)),
              let symbol = try? Symbol(validating: String(decoding: parts[1], as: UTF8.self)),
              let direction = AlertDirection(rawValue: String(decoding: parts[2], as: UTF8.self)) else { return nil }
        let words = String(decoding: value, as: UTF8.self).split(separator: " ")
        guard words.count >= 2, let threshold = ExactDecimal(String(words[0])) else { return nil }
        let state: ArmState
        switch (words[1], words.count) {
        case ("armed", 3):
            guard let generation = UInt64(words[2]) else { return nil }
            state = .armed(generation: generation)
        case ("disarmed", 2): state = .disarmed
        case ("awaiting", 2): state = .awaitingPrice
        default: return nil
        }
        return ArmStateRecord(device: device, symbol: symbol, direction: direction, threshold: threshold, state: state)
    }

    /// What a load read back: every decodable side, and the records that did not decode.
    struct LoadedStates: Sendable {
        var states: [ArmStateRecord] = []
        /// Records skipped because they do not decode; their devices' sides are computed afresh (and rewritten).
        var unreadable: [StoreError] = []
        /// The devices of the unreadable records whose key names a device: their records are rewritten (or deleted).
        var unreadableDevices: [DeviceID] = []
    }

    /// Starts `loadArmStates` on a thread of its own.
    static func startLoadingArmStates(_ database: Database) -> BackgroundResult<LoadedStates> {
        BackgroundResult(name: "cw-alerts-load") { try loadArmStates(database) }
    }

    /// Every `alert:arm:` record, decoded.
    static func loadArmStates(_ database: Database) throws -> LoadedStates {
        var loaded = LoadedStates()
        var symbols = SymbolCache()
        try database.forEachRaw(prefix: armPrefix) { key, value in
            let idBytes = UnsafeRawBufferPointer(rebasing: key[armPrefix.count...])
            let keyText = String(decoding: idBytes, as: UTF8.self)
            // A canonical id is ASCII, so equal text means the bytes decoded without repair: the key is exact.
            guard let device = try? DeviceID(validating: keyText), device.rawValue == keyText else {
                loaded.unreadable.append(
                    StoreError(
                        code: .corruption,
                        message: "record \(ArmRecordCoding.describeKey(Array(key))): the key is not a canonical device id"
                    )
                )
                return .continue
            }
            let start = loaded.states.count
            do throws(StoreError) {
                try ArmRecordCoding.decode(value, key: Array(key), symbols: &symbols) { symbol, direction, threshold, state in
                    loaded.states.append(
                        ArmStateRecord(device: device, symbol: symbol, direction: direction, threshold: threshold, state: state)
                    )
                }
            } catch {
                loaded.states.removeSubrange(start...)
                loaded.unreadable.append(error)
                loaded.unreadableDevices.append(device)
            }
            return .continue
        }
        return loaded
    }

    /// The last prices and the clock the engine continues from.
    static func loadPricesAndClock(_ database: Database) throws -> (lastPrices: [Symbol: ExactDecimal], clock: UInt64) {
        var lastPrices: [Symbol: ExactDecimal] = [:]
        for entry in try database.scan(prefix: lastPrefix) {
            if let symbol = try? Symbol(validating: String(decoding: entry.key.dropFirst(lastPrefix.count), as: UTF8.self)),
               let price = ExactDecimal(String(decoding: entry.value, as: UTF8.self)), price > .zero {
                lastPrices[symbol] = price
            }
        }
        let clock = try database.get(clockKey).flatMap { UInt64(String(decoding: $0, as: UTF8.self)) } ?? 0
        return (lastPrices, clock)
    }

    /// Every device's rules as the engine sees them, read from the settings store's records in memory: what the
    /// alert service's start-up reads when the rules collected while the store loaded are stale or were not kept.
    static func ruleRecords(from settings: SettingsStore) -> [RuleRecord] {
        var records: [RuleRecord] = []
        records.reserveCapacity(settings.deviceCount * 2)
        settings.forEachRule { device, rule in records.append(ruleRecord(device, rule)) }
        return records
    }

    /// A stored rule as the engine sees it.
    static func ruleRecord(_ device: DeviceID, _ rule: StoredRule) -> RuleRecord {
        RuleRecord(device: device, symbol: rule.symbol, rule: AlertRule(below: rule.below, above: rule.above))
    }

    /// A device's rules as the engine sees them; symbols or thresholds that do not
    /// convert (never stored by the settings store) are skipped.
    static func rules(of settings: V1.Settings?) -> [Symbol: AlertRule] {
        guard let settings else { return [:] }
        return StoredRule.rules(of: settings).mapValues { AlertRule(below: $0.below, above: $0.above) }
    }
}
