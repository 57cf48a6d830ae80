extension Database {
    /// A frozen view of the database: reads through it ignore every write made after it was taken.
    ///
    /// Only available inside `withSnapshot(_:)`, which releases it when the body returns; being non-copyable and
    /// borrowed, it cannot outlive that call, so LevelDB never keeps old versions alive longer than needed.
    public struct Snapshot: ~Copyable {
        let database: Database
        let readOptions: OpaquePointer

        /// Like `Database.get(_:)`, as of the snapshot.
        public borrowing func get(_ key: [UInt8]) throws(StoreError) -> [UInt8]? {
            let readOptions = self.readOptions
            let path = database.path
            return try database.withHandles { handles throws(StoreError) in
                try LevelDB.get(handles.db, readOptions, key: key, path: path)
            }
        }

        /// Like `Database.forEach(prefix:from:_:)`, as of the snapshot.
        public borrowing func forEach(
            prefix: [UInt8] = [],
            from start: [UInt8]? = nil,
            _ body: (Entry) throws -> IterationControl
        ) throws {
            let readOptions = self.readOptions
            let path = database.path
            try database.withHandlesRunningBody { handles in
                try Database.forEach(handles.db, readOptions, prefix: prefix, from: start, path: path, body)
            }
        }

        /// Like `Database.scan(prefix:from:limit:)`, as of the snapshot.
        public borrowing func scan(prefix: [UInt8] = [], from start: [UInt8]? = nil, limit: Int = .max)
            throws(StoreError) -> [Entry]
        {
            try Database.checkLimit(limit)
            let readOptions = self.readOptions
            let path = database.path
            return try database.withHandles { handles throws(StoreError) in
                try Database.scan(handles.db, readOptions, prefix: prefix, from: start, limit: limit, path: path)
            }
        }
    }

    /// Runs `body` with a snapshot of the current state, for consistent reads of several keys or ranges while
    /// writes continue. The snapshot is released when `body` returns or throws.
    ///
    /// - Throws: an error thrown by `body`, unchanged; `StoreError.closed` if the database is closed.
    public func withSnapshot<R>(_ body: (borrowing Snapshot) throws -> R) throws -> R {
        try withHandlesRunningBody { handles in
            let snapshotHandles = LevelDB.createSnapshot(handles.db)
            defer { LevelDB.releaseSnapshot(handles.db, snapshotHandles) }
            let snapshot = Snapshot(database: self, readOptions: snapshotHandles.readOptions)
            return try body(snapshot)
        }
    }
}
