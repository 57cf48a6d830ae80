import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import Synchronization

extension SettingsStore {
    /// Refuses a store laid out by a newer build, migrates one laid out by an older build, and marks a new store
    /// with the current layout version.
    ///
    /// A migration runs before anything is loaded and raises the stored version only once it has finished, so a
    /// migration cut short runs again at the next open.
    static func prepareSchema(of database: Database) throws(StoreError) {
        guard let stored = try database.get(StorageLayout.schemaKey) else {
            try writeSchemaVersion(of: database)
            return
        }
        guard let version = parseSchemaVersion(stored) else {
            throw StoreError(
                code: .corruption,
                message: "store at \(database.path): meta:schema holds \(describe(stored)), not a schema version"
            )
        }
        guard version <= StorageLayout.schemaVersion else {
            throw StoreError(
                code: .notSupported,
                message: "store at \(database.path) has schema version \(version), but this build understands "
                    + "versions up to \(StorageLayout.schemaVersion); run a newer coinwatchd or restore a backup"
            )
        }
        if version < 2 {
            _ = try AlertStorage.migrateTextArmStates(database)
            try writeSchemaVersion(of: database)
        }
    }

    /// A synced write, which also makes every earlier unsynced write of a migration durable (one log, in order).
    private static func writeSchemaVersion(of database: Database) throws(StoreError) {
        try database.put(StorageLayout.schemaKey, Array(String(StorageLayout.schemaVersion).utf8), sync: true)
    }

    /// Reads every `settings:` record into `table`, refusing to start on a record it cannot trust: serving from a
    /// store of record that silently skipped devices would answer NOT_FOUND for settings that exist.
    ///
    /// Records in the form this server writes are kept as they are, undecoded (see `SettingsRecord`); any other
    /// record goes through the general decoder, whose errors name what is wrong.
    ///
    /// The rules of every device, as the alert engine reads them, are collected on the way (`rulesAtLoad`).
    static func load(from database: Database, into table: SettingsTable) throws(StoreError) {
        let prefixLength = StorageLayout.settingsPrefix.count
        var rules: [RuleRecord] = []
        var symbols = SymbolCache()
        do {
            try database.forEachRaw(prefix: StorageLayout.settingsPrefix) { key, value in
                let idBytes = UnsafeRawBufferPointer(rebasing: key[prefixLength...])
                let idText = String(decoding: idBytes, as: UTF8.self)
                // A canonical id is ASCII, so equal text means the bytes decoded without repair: the key is exact.
                guard let device = try? DeviceID(validating: idText), device.rawValue == idText else {
                    throw corrupt(database, Array(key), "the key is not a canonical device id")
                }
                let start = rules.count
                let canonical = SettingsRecord.scan(value, deviceID: idBytes) { symbolBytes, below, above in
                    if let rule = AlertStorage.ruleRecord(device, symbolBytes, below, above, &symbols) { rules.append(rule) }
                }
                if canonical {
                    table.insertLoaded(idBytes, canonicalRecord: value)
                    return .continue
                }
                rules.removeSubrange(start...)
                let settings: V1.Settings
                do throws(WireDecodingError) {
                    settings = try V1.Settings(serializedBytes: value, maxBytes: WireLimits.defaultMaxMessageBytes)
                } catch {
                    throw corrupt(database, Array(key), "the value does not decode: \(error.message)")
                }
                guard settings.deviceID == idText else {
                    throw corrupt(database, Array(key), "the value names device '\(settings.deviceID)'")
                }
                table.set(idText, settings)
                for (symbol, rule) in AlertStorage.rules(of: settings) {
                    rules.append(RuleRecord(device: device, symbol: symbol, rule: rule))
                }
                return .continue
            }
            table.rulesAtLoad.withLock { $0 = rules }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: .unknown, message: "loading settings from \(database.path): \(error)")
        }
    }

    private static func corrupt(_ database: Database, _ key: [UInt8], _ reason: String) -> StoreError {
        StoreError(code: .corruption, message: "store at \(database.path): record \(describe(key)): \(reason)")
    }

    /// ASCII digits only, no sign or spaces, at most 9 of them.
    private static func parseSchemaVersion(_ bytes: [UInt8]) -> Int? {
        guard (1...9).contains(bytes.count), bytes.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int(String(decoding: bytes, as: UTF8.self))
    }

    /// Bytes as quoted text when printable ASCII, else hex; at most 80 bytes shown.
    private static func describe(_ bytes: [UInt8]) -> String {
        let shown = bytes.prefix(80)
        let suffix = bytes.count > shown.count ? "… (\(bytes.count) bytes)" : ""
        if shown.allSatisfy({ (0x20..<0x7F).contains($0) }) {
            return "'\(String(decoding: shown, as: UTF8.self))'\(suffix)"
        }
        return "0x" + shown.map { String($0, radix: 16).leftPadded(to: 2) }.joined() + suffix
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
