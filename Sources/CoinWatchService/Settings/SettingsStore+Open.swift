import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import Synchronization

extension SettingsStore {
    /// Reads every `settings:` record into `table`, refusing to start on a record it cannot trust: serving from a
    /// store of record that silently skipped devices would answer NOT_FOUND for settings that exist.
    ///
    /// Records in the form this server writes are kept as they are, undecoded (see `SettingsRecord`); any other
    /// record goes through the general decoder, whose errors name what is wrong.
    ///
    /// `onLoadedRule`, when given, is called with every rule of every record kept, in key order, from the same pass:
    /// the load hook through which the alert service collects its start-up rules (see `StoredRule`).
    static func load(
        from database: Database,
        into table: SettingsTable,
        onLoadedRule: ((DeviceID, StoredRule) -> Void)?
    ) throws(StoreError) {
        let prefixLength = StorageLayout.settingsPrefix.count
        // The rules of the record being read: a record may turn out not to be canonical after some were seen.
        var rules: [StoredRule] = []
        var symbols = SymbolCache()
        do {
            try database.forEachRaw(prefix: StorageLayout.settingsPrefix) { key, value in
                let idBytes = UnsafeRawBufferPointer(rebasing: key[prefixLength...])
                let idText = String(decoding: idBytes, as: UTF8.self)
                // A canonical id is ASCII, so equal text means the bytes decoded without repair: the key is exact.
                guard let device = try? DeviceID(validating: idText), device.rawValue == idText else {
                    throw corrupt(database, Array(key), "the key is not a canonical device id")
                }
                rules.removeAll(keepingCapacity: true)
                let canonical: Bool
                if onLoadedRule != nil {
                    canonical = SettingsRecord.scan(value, deviceID: idBytes) { symbolBytes, below, above in
                        if let rule = StoredRule(symbol: symbolBytes, below: below, above: above, symbols: &symbols) {
                            rules.append(rule)
                        }
                    }
                } else {
                    canonical = SettingsRecord.scan(value, deviceID: idBytes)
                }
                if canonical {
                    table.insertLoaded(idBytes, canonicalRecord: value)
                    if let onLoadedRule {
                        for rule in rules { onLoadedRule(device, rule) }
                    }
                    return .continue
                }
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
                if let onLoadedRule {
                    for rule in StoredRule.rules(of: settings).values { onLoadedRule(device, rule) }
                }
                return .continue
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: .unknown, message: "loading settings from \(database.path): \(error)")
        }
    }

    private static func corrupt(_ database: Database, _ key: [UInt8], _ reason: String) -> StoreError {
        StoreError(
            code: .corruption, message: "store at \(database.path): record \(StorageLayout.describe(key)): \(reason)"
        )
    }
}
