import CoinWatchStore

/// The layout version a store is in (`meta:schema`, see `StorageLayout.schemaVersion`), and the step that brings an
/// older store up to this build's.
///
/// Each component migrates its own key range and says so in a `Migration` (`AlertStorage.migrations`); the service
/// runs them all before any component loads (`CoinWatchService.prepareStorage`). A component that opens the store
/// by itself only checks the version (`check`), so no component needs to know another's migrations.
enum StorageSchema {
    /// What brings a store from `version - 1` to `version`, written by the component whose keys it rewrites.
    ///
    /// It must be safe to run again after being cut short: the version is raised only once every migration finished.
    struct Migration: Sendable {
        let version: Int
        let run: @Sendable (Database) throws(StoreError) -> Void
    }

    /// Refuses a store laid out by a newer build (or holding no readable version), and marks a new store with the
    /// current version. Returns the version the store is in.
    @discardableResult
    static func check(_ database: Database) throws(StoreError) -> Int {
        guard let stored = try database.get(StorageLayout.schemaKey) else {
            try writeVersion(of: database)
            return StorageLayout.schemaVersion
        }
        guard let version = parseVersion(stored) else {
            throw StoreError(
                code: .corruption,
                message: "store at \(database.path): meta:schema holds \(StorageLayout.describe(stored)), "
                    + "not a schema version"
            )
        }
        guard version <= StorageLayout.schemaVersion else {
            throw StoreError(
                code: .notSupported,
                message: "store at \(database.path) has schema version \(version), but this build understands "
                    + "versions up to \(StorageLayout.schemaVersion); run a newer coinwatchd or restore a backup"
            )
        }
        return version
    }

    /// `check`, then every migration above the stored version in version order, then the current version.
    ///
    /// A migration runs before anything is loaded and the stored version is raised only once all of them have
    /// finished, so a migration cut short runs again at the next open.
    static func prepare(_ database: Database, migrations: [Migration]) throws(StoreError) {
        let version = try check(database)
        guard version < StorageLayout.schemaVersion else { return }
        for migration in migrations.sorted(by: { $0.version < $1.version }) where migration.version > version {
            try migration.run(database)
        }
        try writeVersion(of: database)
    }

    /// A synced write, which also makes every earlier unsynced write of a migration durable (one log, in order).
    private static func writeVersion(of database: Database) throws(StoreError) {
        try database.put(StorageLayout.schemaKey, Array(String(StorageLayout.schemaVersion).utf8), sync: true)
    }

    /// ASCII digits only, no sign or spaces, at most 9 of them.
    private static func parseVersion(_ bytes: [UInt8]) -> Int? {
        guard (1...9).contains(bytes.count), bytes.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int(String(decoding: bytes, as: UTF8.self))
    }
}
