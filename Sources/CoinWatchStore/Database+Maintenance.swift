extension Database {
    /// Returns a LevelDB property, or `nil` if LevelDB does not know `name`.
    ///
    /// Useful names: `leveldb.stats` (compaction statistics), `leveldb.sstables` (table files per level),
    /// `leveldb.approximate-memory-usage`, `leveldb.num-files-at-level<N>`.
    public func property(_ name: String) throws(StoreError) -> String? {
        guard !name.utf8.contains(0) else {
            throw .invalidArgument("property name must not contain NUL bytes: \(name.debugDescription)")
        }
        return try withHandles { handles throws(StoreError) in
            LevelDB.property(handles.db, name: name)
        }
    }

    /// Returns roughly how many bytes of table files hold keys in `start ..< limit`. Recent writes still in memory
    /// are not counted.
    public func approximateSize(from start: [UInt8], to limit: [UInt8]) throws(StoreError) -> UInt64 {
        try withHandles { handles throws(StoreError) in
            LevelDB.approximateSize(handles.db, from: start, to: limit)
        }
    }

    /// Rewrites the table files holding keys in `start ... limit` (`nil` meaning that end of the key space), which
    /// drops deleted and overwritten data and flushes recent writes to tables. Blocks until done.
    public func compactRange(from start: [UInt8]? = nil, to limit: [UInt8]? = nil) throws(StoreError) {
        try withHandles { handles throws(StoreError) in
            LevelDB.compactRange(handles.db, from: start, to: limit)
        }
    }

    /// Rebuilds a damaged database's metadata from the table and log files that remain, so it can be opened again.
    /// Data in unreadable files is lost; everything LevelDB can still parse is kept.
    ///
    /// Run it only while nothing uses the store: LevelDB's repair does not lock the directory, so this checks just
    /// before starting that no handle (here or in another process) has it open, but cannot stop one opening during
    /// the repair.
    ///
    /// - Throws: `.notFound` if `path` is not a directory (LevelDB would create an empty database there),
    ///   `.alreadyInUse` if the database is open, or what LevelDB reports.
    public static func repair(path: String, options: Options = Options()) throws(StoreError) {
        try LevelDB.repair(path: path, options: options)
    }

    /// Deletes the database in `path` and all its files. Succeeds if there is none.
    ///
    /// - Throws: `.alreadyInUse` if the database is open, or what LevelDB reports.
    public static func destroy(path: String) throws(StoreError) {
        try LevelDB.destroy(path: path)
    }
}
