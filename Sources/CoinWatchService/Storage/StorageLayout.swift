import CoinWatchModel

/// The key layout of CoinWatch's LevelDB store, described for operators in `docs/STORAGE.md`.
///
/// Every key starts with an ASCII prefix naming its owner and ending in `:`, so each component iterates only its
/// own range and a future migration can rewrite one range without touching the others. The prefixes are listed
/// here, in one place, so two components can never pick overlapping ones.
enum StorageLayout {
    /// Holds the layout version as ASCII decimal text; written on first open.
    static let schemaKey: [UInt8] = Array("meta:schema".utf8)

    /// The layout this build reads and writes. Raise it (and add a migration) when an existing key's meaning
    /// changes; adding a new prefix or a new protobuf field does not need a new version.
    ///
    /// 1: arm states as text, one `alert:state:` record per rule side.
    /// 2: arm states as one binary `alert:arm:` record per device; opening a version 1 store migrates it
    ///    (`AlertStorage.migrations`).
    static let schemaVersion = 2

    /// The sequence number of the last settings batch the database holds durably by itself (8 bytes,
    /// little-endian); the settings journal replays the batches after it at open (see `WriteAheadJournal`).
    static let journalCheckpointKey: [UInt8] = Array("meta:settings-journal".utf8)

    /// The settings journal's file, inside the database directory; LevelDB leaves files it did not name alone.
    static func journalPath(_ databasePath: String) -> String {
        databasePath + "/coinwatch-settings.journal"
    }

    /// `settings:<canonical device id>` → serialized `coinwatch.v1.Settings`.
    static let settingsPrefix: [UInt8] = Array("settings:".utf8)

    /// Reserved for the price hub: `price:<symbol>` → the last price seen.
    static let pricePrefix: [UInt8] = Array("price:".utf8)

    /// The alert engine's arm states, last prices and clock (see `AlertStorage`).
    static let alertPrefix: [UInt8] = Array("alert:".utf8)

    /// Reserved for the alert engine: alerts waiting for delivery.
    static let outboxPrefix: [UInt8] = Array("outbox:".utf8)

    // `auth:` (service keys and device secrets) belongs to the credential store, `AuthStorage` in CoinWatchAuth,
    // which declares it: that module sits below this one.
    /// Push delivery: devices registered for APNs (see `PushStorage`).
    static let pushPrefix: [UInt8] = Array("push:".utf8)

    /// The key of one device's settings.
    static func settingsKey(_ canonicalDeviceID: String) -> [UInt8] {
        var key = settingsPrefix
        key.append(contentsOf: canonicalDeviceID.utf8)
        return key
    }

    /// A stored key or value for an error message: quoted text when it is printable ASCII, else hex; at most
    /// `limit` bytes shown.
    static func describe(_ bytes: [UInt8], limit: Int = 80) -> String {
        let shown = bytes.prefix(limit)
        let suffix = bytes.count > shown.count ? "… (\(bytes.count) bytes)" : ""
        if shown.allSatisfy({ (0x20..<0x7F).contains($0) }) {
            return "'\(String(decoding: shown, as: UTF8.self))'\(suffix)"
        }
        return "0x" + shown.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + suffix
    }
}
