import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore

/// The alert engine's records in LevelDB (see docs/STORAGE.md):
///
/// | key | value |
/// |---|---|
/// | `alert:state:<device>\0<symbol>\0<above|below>` | `<threshold> armed <generation>`, `<threshold> disarmed` or `<threshold> awaiting` |
/// | `alert:last:<symbol>` | the last price the engine evaluated, decimal text |
/// | `alert:clock` | the engine clock, decimal text |
/// | `outbox:<device>\0<symbol>` | the newest undelivered `coinwatch.v1.Alert` for that device and symbol |
///
/// Text values keep the records readable with any LevelDB tool and trivially migratable.
enum AlertStorage {
    static let statePrefix = Array("alert:state:".utf8)
    static let lastPrefix = Array("alert:last:".utf8)
    static let clockKey = Array("alert:clock".utf8)
    static let outboxPrefix = Array("outbox:".utf8)

    static func stateKey(_ device: DeviceID, _ symbol: Symbol, _ direction: AlertDirection) -> [UInt8] {
        statePrefix + Array(device.rawValue.utf8) + [0] + Array(symbol.rawValue.utf8) + [0] + Array(direction.rawValue.utf8)
    }

    static func lastKey(_ symbol: Symbol) -> [UInt8] { lastPrefix + Array(symbol.rawValue.utf8) }

    static func outboxKey(_ device: DeviceID, _ symbol: Symbol) -> [UInt8] {
        outboxDevicePrefix(device) + Array(symbol.rawValue.utf8)
    }

    static func outboxDevicePrefix(_ device: DeviceID) -> [UInt8] { outboxPrefix + Array(device.rawValue.utf8) + [0] }

    static func encode(_ record: ArmStateRecord) -> [UInt8] {
        switch record.state {
        case .armed(let generation): Array("\(record.threshold) armed \(generation)".utf8)
        case .disarmed: Array("\(record.threshold) disarmed".utf8)
        case .awaitingPrice: Array("\(record.threshold) awaiting".utf8)
        }
    }

    /// Parses a state record; nil for anything malformed (the engine then recomputes that side).
    static func decodeState(key: [UInt8], value: [UInt8]) -> ArmStateRecord? {
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

    /// Everything the engine needs to continue where it stopped.
    static func load(_ database: Database) throws -> (states: [ArmStateRecord], lastPrices: [Symbol: ExactDecimal], clock: UInt64) {
        var states: [ArmStateRecord] = []
        try database.forEach(prefix: statePrefix) { entry in
            if let record = decodeState(key: entry.key, value: entry.value) { states.append(record) }
            return .continue
        }
        var lastPrices: [Symbol: ExactDecimal] = [:]
        for entry in try database.scan(prefix: lastPrefix) {
            if let symbol = try? Symbol(validating: String(decoding: entry.key.dropFirst(lastPrefix.count), as: UTF8.self)),
               let price = ExactDecimal(String(decoding: entry.value, as: UTF8.self)), price > .zero {
                lastPrices[symbol] = price
            }
        }
        let clock = try database.get(clockKey).flatMap { UInt64(String(decoding: $0, as: UTF8.self)) } ?? 0
        return (states, lastPrices, clock)
    }

    /// A device's rules as the engine sees them; symbols or thresholds that do not
    /// convert (never stored by the settings store) are skipped.
    static func rules(of settings: V1.Settings?) -> [Symbol: AlertRule] {
        guard let settings else { return [:] }
        var rules: [Symbol: AlertRule] = [:]
        for (text, rule) in settings.rules {
            guard let symbol = try? Symbol(validating: text) else { continue }
            rules[symbol] = AlertRule(below: rule.below.flatMap(ExactDecimal.init), above: rule.above.flatMap(ExactDecimal.init))
        }
        return rules
    }
}
