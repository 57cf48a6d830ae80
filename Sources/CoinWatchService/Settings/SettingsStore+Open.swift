import CoinWatchModel
import CoinWatchProto
import CoinWatchStore

extension SettingsStore {
    /// Refuses a store laid out by a newer build, and marks a new store with the current layout version.
    ///
    /// An older version would be migrated here, before anything is loaded; version 1 is the first, so none exist.
    static func prepareSchema(of database: Database) throws(StoreError) {
        guard let stored = try database.get(StorageLayout.schemaKey) else {
            try database.put(StorageLayout.schemaKey, Array(String(StorageLayout.schemaVersion).utf8), sync: true)
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
    }

    /// Reads every `settings:` record into `table`, refusing to start on a record it cannot trust: serving from a
    /// store of record that silently skipped devices would answer NOT_FOUND for settings that exist.
    static func load(from database: Database, into table: SettingsTable) throws(StoreError) {
        let prefixLength = StorageLayout.settingsPrefix.count
        do {
            try database.forEach(prefix: StorageLayout.settingsPrefix) { entry in
                let idText = String(decoding: entry.key[prefixLength...], as: UTF8.self)
                let canonical = try? DeviceID(validating: idText).rawValue
                guard canonical == idText, Array(idText.utf8) == Array(entry.key[prefixLength...]) else {
                    throw corrupt(database, entry.key, "the key is not a canonical device id")
                }
                let settings: V1.Settings
                do throws(WireDecodingError) {
                    settings = try V1.Settings(serializedBytes: entry.value)
                } catch {
                    throw corrupt(database, entry.key, "the value does not decode: \(error.message)")
                }
                guard settings.deviceID == idText else {
                    throw corrupt(database, entry.key, "the value names device '\(settings.deviceID)'")
                }
                table.set(idText, settings)
                return .continue
            }
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
