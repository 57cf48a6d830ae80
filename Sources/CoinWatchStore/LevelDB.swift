internal import CLevelDB

/// The only code that calls LevelDB's C API (`<leveldb/c.h>`). Everything above it deals in Swift types; the C
/// objects appear only as `OpaquePointer`s inside `LevelDB.Handles`, which never leaves the module.
///
/// Rules of the C API followed throughout:
/// - Every call that can fail takes `char** errptr`, which must point to NULL on entry. On failure LevelDB stores a
///   `malloc`ed, NUL-terminated copy of `Status::ToString()` there, which the caller frees with `leveldb_free`
///   (`takeError` does both).
/// - Keys and values are `(const char*, size_t)` pairs that LevelDB copies before returning; they are binary and
///   NOT NUL-terminated, so they are never read with `String(cString:)`.
/// - Every `*_create` has a matching `*_destroy` called exactly once by the code that created it.
enum LevelDB {
    /// The C objects behind one open database. All are created by `open` and destroyed by `close`, after which
    /// none may be used; `Database` enforces that.
    struct Handles {
        let db: OpaquePointer
        let settings: Settings
        /// Default read options, shared by all plain reads. LevelDB only reads them (`const` in the C API).
        let readOptions: OpaquePointer
        /// Write options with `sync == false` and `sync == true`, shared by all writes (read-only to LevelDB).
        let writeOptions: OpaquePointer
        let syncWriteOptions: OpaquePointer
    }

    /// A `leveldb_options_t` and the objects it points to. LevelDB keeps pointers to the cache and the filter
    /// policy for as long as the database is open, so they are destroyed only after `leveldb_close`.
    struct Settings {
        let options: OpaquePointer
        let cache: OpaquePointer?
        let filterPolicy: OpaquePointer?

        init(_ configuration: Database.Options) {
            // leveldb_options_create: returns a new object owned by the caller; freed by leveldb_options_destroy.
            options = leveldb_options_create()
            leveldb_options_set_create_if_missing(options, configuration.createIfMissing ? 1 : 0)
            leveldb_options_set_error_if_exists(options, configuration.errorIfExists ? 1 : 0)
            leveldb_options_set_paranoid_checks(options, configuration.paranoidChecks ? 1 : 0)
            leveldb_options_set_write_buffer_size(options, configuration.writeBufferSize)
            leveldb_options_set_max_open_files(options, Int32(configuration.maxOpenFiles))
            // leveldb_cache_create_lru: owned by the caller, freed by leveldb_cache_destroy once no database that
            // was opened with it is open any more.
            let cache = leveldb_cache_create_lru(configuration.blockCacheSize)
            leveldb_options_set_cache(options, cache)
            self.cache = cache
            if let bits = configuration.bloomFilterBitsPerKey {
                // leveldb_filterpolicy_create_bloom: owned by the caller, freed by leveldb_filterpolicy_destroy
                // once no database that was opened with it is open any more.
                let policy = leveldb_filterpolicy_create_bloom(Int32(bits))
                leveldb_options_set_filter_policy(options, policy)
                filterPolicy = policy
            } else {
                filterPolicy = nil
            }
        }

        func destroy() {
            leveldb_options_destroy(options)
            if let cache {
                leveldb_cache_destroy(cache)
            }
            if let filterPolicy {
                leveldb_filterpolicy_destroy(filterPolicy)
            }
        }
    }

    // MARK: Opening and closing

    /// Opens (or creates) the database in `path`. On failure everything created so far is destroyed.
    static func open(path: String, options configuration: Database.Options) throws(StoreError) -> Handles {
        try validate(path: path)
        try configuration.validate()
        let settings = Settings(configuration)
        var error: UnsafeMutablePointer<CChar>? = nil
        // leveldb_open: returns a handle owned by the caller (freed by leveldb_close), or NULL with *errptr set.
        let db: OpaquePointer? = path.withCString { leveldb_open(settings.options, $0, &error) }
        if let message = takeError(&error) {
            if let db {
                leveldb_close(db)
            }
            settings.destroy()
            throw StoreError(levelDBStatus: message, operation: "open", path: path)
        }
        guard let db else {
            settings.destroy()
            throw StoreError(code: .unknown, message: "open \(path): LevelDB returned no handle and no error")
        }
        // leveldb_readoptions_create / leveldb_writeoptions_create: owned by the caller, freed by the matching
        // *_destroy in `close`.
        let readOptions: OpaquePointer = leveldb_readoptions_create()
        let writeOptions: OpaquePointer = leveldb_writeoptions_create()
        let syncWriteOptions: OpaquePointer = leveldb_writeoptions_create()
        leveldb_writeoptions_set_sync(syncWriteOptions, 1)
        return Handles(
            db: db,
            settings: settings,
            readOptions: readOptions,
            writeOptions: writeOptions,
            syncWriteOptions: syncWriteOptions
        )
    }

    /// Closes the database and destroys every object `open` created. REQUIRES: no other call is using `handles`
    /// and no iterator or snapshot of it is alive (LevelDB asserts that none are).
    static func close(_ handles: Handles) {
        // leveldb_close: waits for background compaction, releases the LOCK file and frees the handle.
        leveldb_close(handles.db)
        leveldb_readoptions_destroy(handles.readOptions)
        leveldb_writeoptions_destroy(handles.writeOptions)
        leveldb_writeoptions_destroy(handles.syncWriteOptions)
        handles.settings.destroy()
    }

    /// Rebuilds the metadata of a damaged database from whatever table and log files remain.
    static func repair(path: String, options configuration: Database.Options) throws(StoreError) {
        try validate(path: path)
        try configuration.validate()
        guard FileSystem.isDirectory(path) else {
            // LevelDB would create the directory and an empty database in it.
            throw StoreError(code: .notFound, message: "repair \(path): no such directory")
        }
        try checkNotInUse(path: path, options: configuration)
        let settings = Settings(configuration)
        defer { settings.destroy() }
        var error: UnsafeMutablePointer<CChar>? = nil
        // leveldb_repair_db: does NOT take the LOCK (see checkNotInUse); reports failure through *errptr.
        path.withCString { leveldb_repair_db(settings.options, $0, &error) }
        if let message = takeError(&error) {
            throw StoreError(levelDBStatus: message, operation: "repair", path: path)
        }
    }

    /// Throws `.alreadyInUse` if the database in `path` is open, here or in another process.
    ///
    /// `leveldb_repair_db` does not take the directory's LOCK, so repairing an open database would rewrite its
    /// metadata underneath it. `leveldb_open` takes the LOCK before it reads anything else, so a trial open reveals
    /// such a conflict; any other outcome (it opens, or fails because of the damage to be repaired) lets the repair
    /// go ahead. A handle opened between this check and the end of the repair is not detected.
    private static func checkNotInUse(path: String, options configuration: Database.Options) throws(StoreError) {
        var probe = configuration
        probe.createIfMissing = false
        probe.errorIfExists = false
        do throws(StoreError) {
            close(try open(path: path, options: probe))
        } catch {
            if error.code == .alreadyInUse {
                throw error
            }
        }
    }

    /// Deletes every file of the database in `path` (succeeds when there is none).
    static func destroy(path: String) throws(StoreError) {
        try validate(path: path)
        // leveldb_options_create: freed below by leveldb_options_destroy.
        let options: OpaquePointer = leveldb_options_create()
        defer { leveldb_options_destroy(options) }
        var error: UnsafeMutablePointer<CChar>? = nil
        // leveldb_destroy_db: takes the LOCK itself; reports failure through *errptr.
        path.withCString { leveldb_destroy_db(options, $0, &error) }
        if let message = takeError(&error) {
            throw StoreError(levelDBStatus: message, operation: "destroy", path: path)
        }
    }

    // MARK: Reads and writes

    /// Returns the value of `key`, `nil` when absent, `[]` when present and empty.
    static func get(_ db: OpaquePointer, _ readOptions: OpaquePointer, key: [UInt8], path: String)
        throws(StoreError) -> [UInt8]?
    {
        var error: UnsafeMutablePointer<CChar>? = nil
        var length = 0
        // leveldb_get: returns NULL when the key is absent (with *errptr untouched), otherwise a malloc'ed copy of
        // the value of `length` bytes that the caller frees with leveldb_free. An empty value comes back as a
        // non-NULL malloc(0) pointer with length 0 (glibc returns a unique pointer for malloc(0)).
        let value = withBytes(key) { keyBytes, keyLength in
            leveldb_get(db, readOptions, keyBytes, keyLength, &length, &error)
        }
        if let message = takeError(&error) {
            if let value {
                leveldb_free(value)
            }
            throw StoreError(levelDBStatus: message, operation: "get", path: path)
        }
        guard let value else {
            return nil
        }
        defer { leveldb_free(value) }
        return [UInt8](UnsafeRawBufferPointer(start: value, count: length))
    }

    static func put(_ handles: Handles, key: [UInt8], value: [UInt8], sync: Bool, path: String) throws(StoreError) {
        var error: UnsafeMutablePointer<CChar>? = nil
        let writeOptions = sync ? handles.syncWriteOptions : handles.writeOptions
        // leveldb_put: copies key and value before returning; reports failure through *errptr.
        withBytes(key) { keyBytes, keyLength in
            withBytes(value) { valueBytes, valueLength in
                leveldb_put(handles.db, writeOptions, keyBytes, keyLength, valueBytes, valueLength, &error)
            }
        }
        if let message = takeError(&error) {
            throw StoreError(levelDBStatus: message, operation: "put", path: path)
        }
    }

    static func delete(_ handles: Handles, key: [UInt8], sync: Bool, path: String) throws(StoreError) {
        var error: UnsafeMutablePointer<CChar>? = nil
        let writeOptions = sync ? handles.syncWriteOptions : handles.writeOptions
        // leveldb_delete: copies the key; deleting an absent key succeeds; failure through *errptr.
        withBytes(key) { keyBytes, keyLength in
            leveldb_delete(handles.db, writeOptions, keyBytes, keyLength, &error)
        }
        if let message = takeError(&error) {
            throw StoreError(levelDBStatus: message, operation: "delete", path: path)
        }
    }

    /// Applies `batch` atomically: LevelDB appends it to the log as one record.
    static func write(_ handles: Handles, batch: WriteBatch, sync: Bool, path: String) throws(StoreError) {
        // leveldb_writebatch_create: owned by the caller, freed by leveldb_writebatch_destroy.
        let cBatch: OpaquePointer = leveldb_writebatch_create()
        defer { leveldb_writebatch_destroy(cBatch) }
        for operation in batch.operations {
            switch operation {
            case .put(let key, let value):
                // leveldb_writebatch_put: copies key and value into the batch.
                withBytes(key) { keyBytes, keyLength in
                    withBytes(value) { valueBytes, valueLength in
                        leveldb_writebatch_put(cBatch, keyBytes, keyLength, valueBytes, valueLength)
                    }
                }
            case .delete(let key):
                // leveldb_writebatch_delete: copies the key into the batch.
                withBytes(key) { keyBytes, keyLength in
                    leveldb_writebatch_delete(cBatch, keyBytes, keyLength)
                }
            }
        }
        var error: UnsafeMutablePointer<CChar>? = nil
        let writeOptions = sync ? handles.syncWriteOptions : handles.writeOptions
        // leveldb_write: does not take ownership of the batch; failure through *errptr.
        leveldb_write(handles.db, writeOptions, cBatch, &error)
        if let message = takeError(&error) {
            throw StoreError(levelDBStatus: message, operation: "write", path: path)
        }
    }

    // MARK: Iteration

    /// Calls `body` with each entry whose key starts with `prefix`, in bytewise key order, starting at the first
    /// key `>= max(prefix, start)`, until `body` returns `false` or the prefix range ends.
    static func iterate(
        _ db: OpaquePointer,
        _ readOptions: OpaquePointer,
        prefix: [UInt8],
        from start: [UInt8]?,
        path: String,
        _ body: (Database.Entry) -> Bool
    ) throws(StoreError) {
        try iterateInPlace(db, readOptions, prefix: prefix, from: start, path: path) { key, value in
            body(Database.Entry(key: [UInt8](key), value: [UInt8](value)))
        }
    }

    /// Like `iterate`, but lends `body` the current key and value in place instead of copying them, and reads
    /// through its own read options with `fill_cache` off, so a one-time scan of a whole range neither allocates per
    /// entry nor evicts the blocks that later point reads need.
    static func iterateBorrowing(
        _ db: OpaquePointer,
        prefix: [UInt8],
        path: String,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(StoreError) {
        // leveldb_readoptions_create: freed by leveldb_readoptions_destroy; LevelDB only reads it while the
        // iterator lives, and the iterator is destroyed inside `iterateInPlace`, before this defer runs.
        let readOptions: OpaquePointer = leveldb_readoptions_create()
        defer { leveldb_readoptions_destroy(readOptions) }
        leveldb_readoptions_set_fill_cache(readOptions, 0)
        try iterateInPlace(db, readOptions, prefix: prefix, from: nil, path: path, body)
    }

    /// The one iteration loop: lends `body` each key and value in the prefix range, in place.
    private static func iterateInPlace(
        _ db: OpaquePointer,
        _ readOptions: OpaquePointer,
        prefix: [UInt8],
        from start: [UInt8]?,
        path: String,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(StoreError) {
        // leveldb_create_iterator: owned by the caller, freed by leveldb_iter_destroy, which must happen before the
        // database is closed (the caller holds the database open for the whole call).
        let iterator: OpaquePointer = leveldb_create_iterator(db, readOptions)
        defer { leveldb_iter_destroy(iterator) }
        var target = prefix
        if let start, prefix.lexicographicallyPrecedes(start) {
            target = start
        }
        // leveldb_iter_seek: positions at the first key >= target (bytewise comparator).
        withBytes(target) { bytes, length in leveldb_iter_seek(iterator, bytes, length) }
        while leveldb_iter_valid(iterator) != 0 {
            // leveldb_iter_key / leveldb_iter_value: pointers into the iterator's current block, valid only until
            // the iterator moves or is destroyed; `body` may not keep them.
            var keyLength = 0
            let keyBytes = UnsafeRawBufferPointer(start: leveldb_iter_key(iterator, &keyLength), count: keyLength)
            guard keyBytes.starts(with: prefix) else {
                break
            }
            var valueLength = 0
            let valueBytes = UnsafeRawBufferPointer(
                start: leveldb_iter_value(iterator, &valueLength),
                count: valueLength
            )
            guard body(keyBytes, valueBytes) else {
                break
            }
            leveldb_iter_next(iterator)
        }
        var error: UnsafeMutablePointer<CChar>? = nil
        // leveldb_iter_get_error: sets *errptr if the iteration stopped because of an error (e.g. corruption).
        leveldb_iter_get_error(iterator, &error)
        if let message = takeError(&error) {
            throw StoreError(levelDBStatus: message, operation: "iterate", path: path)
        }
    }

    // MARK: Snapshots

    /// A snapshot and read options that read through it.
    struct SnapshotHandles {
        let snapshot: OpaquePointer
        let readOptions: OpaquePointer
    }

    static func createSnapshot(_ db: OpaquePointer) -> SnapshotHandles {
        // leveldb_create_snapshot: owned by the caller, released by leveldb_release_snapshot before the database is
        // closed. leveldb_readoptions_create: freed by leveldb_readoptions_destroy.
        let snapshot: OpaquePointer = leveldb_create_snapshot(db)
        let readOptions: OpaquePointer = leveldb_readoptions_create()
        leveldb_readoptions_set_snapshot(readOptions, snapshot)
        return SnapshotHandles(snapshot: snapshot, readOptions: readOptions)
    }

    static func releaseSnapshot(_ db: OpaquePointer, _ handles: SnapshotHandles) {
        leveldb_readoptions_destroy(handles.readOptions)
        leveldb_release_snapshot(db, handles.snapshot)
    }

    // MARK: Maintenance

    /// Returns the value of a LevelDB property such as `leveldb.stats`, or `nil` for an unknown name.
    static func property(_ db: OpaquePointer, name: String) -> String? {
        // leveldb_property_value: returns NULL for an unknown property, otherwise a malloc'ed NUL-terminated string
        // that the caller frees with leveldb_free.
        guard let value = name.withCString({ leveldb_property_value(db, $0) }) else {
            return nil
        }
        defer { leveldb_free(value) }
        return String(cString: value)
    }

    /// Returns the approximate bytes of table files used by keys in `start ..< limit` (the memtable is not
    /// counted).
    static func approximateSize(_ db: OpaquePointer, from start: [UInt8], to limit: [UInt8]) -> UInt64 {
        var size: UInt64 = 0
        // leveldb_approximate_sizes: reads `num_ranges` (start, limit) pairs and writes one size per range; keeps no
        // pointer after returning.
        withBytes(start) { startBytes, startLength in
            withBytes(limit) { limitBytes, limitLength in
                var starts: UnsafePointer<CChar>? = startBytes
                var limits: UnsafePointer<CChar>? = limitBytes
                var startLengths = startLength
                var limitLengths = limitLength
                leveldb_approximate_sizes(db, 1, &starts, &startLengths, &limits, &limitLengths, &size)
            }
        }
        return size
    }

    /// Compacts the key range `start ... limit`; a `nil` bound extends the range to that end of the key space.
    static func compactRange(_ db: OpaquePointer, from start: [UInt8]?, to limit: [UInt8]?) {
        // leveldb_compact_range: a NULL key means "before the first" / "after the last" key; keeps no pointer.
        withOptionalBytes(start) { startBytes, startLength in
            withOptionalBytes(limit) { limitBytes, limitLength in
                leveldb_compact_range(db, startBytes, startLength, limitBytes, limitLength)
            }
        }
    }

    // MARK: Helpers

    /// Moves LevelDB's error message out of `error`, freeing it. Returns `nil` when there was no error.
    private static func takeError(_ error: inout UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer = error else {
            return nil
        }
        // The message is a NUL-terminated strdup of Status::ToString(), owned by us: read it, then leveldb_free it.
        let message = String(cString: pointer)
        leveldb_free(pointer)
        error = nil
        return message
    }

    /// Rejects paths that `withCString` would silently truncate or that name no directory.
    private static func validate(path: String) throws(StoreError) {
        guard !path.isEmpty else {
            throw .invalidArgument("database path must not be empty")
        }
        guard !path.utf8.contains(0) else {
            throw .invalidArgument("database path must not contain NUL bytes: \(path.debugDescription)")
        }
    }

    /// Calls `body` with a `(const char*, size_t)` view of `bytes`. The pointer is never NULL, even for an empty
    /// array, because LevelDB builds a `Slice` from it and compares with `memcmp`.
    private static func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>, Int) -> R) -> R {
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress {
                // UInt8 and CChar are layout-compatible; LevelDB only reads the bytes.
                return body(base.assumingMemoryBound(to: CChar.self), raw.count)
            }
            let empty: CChar = 0
            return withUnsafePointer(to: empty) { body($0, 0) }
        }
    }

    /// Like `withBytes`, passing NULL for `nil` (used where the C API gives NULL a meaning).
    private static func withOptionalBytes<R>(_ bytes: [UInt8]?, _ body: (UnsafePointer<CChar>?, Int) -> R) -> R {
        guard let bytes else {
            return body(nil, 0)
        }
        return withBytes(bytes) { body($0, $1) }
    }
}
