extension Database {
    /// A key and its value, copied out of the database.
    public struct Entry: Hashable, Sendable {
        public var key: [UInt8]
        public var value: [UInt8]

        public init(key: [UInt8], value: [UInt8]) {
            self.key = key
            self.value = value
        }
    }

    /// Tells an iteration whether to go on after the current entry.
    public enum IterationControl: Hashable, Sendable {
        case `continue`
        case stop
    }

    /// Calls `body` with every entry whose key starts with `prefix`, in bytewise key order (so `"a"` < `"a\0"` <
    /// `"ab"` < `"a\u{FF}"`), until it returns `.stop`.
    ///
    /// The entries come from an implicit snapshot taken when iteration starts, so writes made meanwhile (including
    /// by `body`) are not seen.
    ///
    /// - Parameters:
    ///   - prefix: only keys starting with these bytes are visited; `[]` visits every key.
    ///   - start: if given, iteration begins at the first key `>= start`, to resume a paged listing.
    ///   - body: may call other methods of this database.
    /// - Throws: an error thrown by `body`, unchanged; otherwise a `StoreError` (`.closed`, `.corruption`, ...).
    public func forEach(
        prefix: [UInt8] = [],
        from start: [UInt8]? = nil,
        _ body: (Entry) throws -> IterationControl
    ) throws {
        try withHandlesRunningBody { handles in
            try Self.forEach(handles.db, handles.readOptions, prefix: prefix, from: start, path: path, body)
        }
    }

    /// Returns up to `limit` entries whose key starts with `prefix`, in bytewise key order, from the first key
    /// `>= start` if given.
    public func scan(prefix: [UInt8] = [], from start: [UInt8]? = nil, limit: Int = .max) throws(StoreError)
        -> [Entry]
    {
        try Self.checkLimit(limit)
        return try withHandles { handles throws(StoreError) in
            try Self.scan(handles.db, handles.readOptions, prefix: prefix, from: start, limit: limit, path: path)
        }
    }

    // MARK: Shared with snapshots

    static func forEach(
        _ db: OpaquePointer,
        _ readOptions: OpaquePointer,
        prefix: [UInt8],
        from start: [UInt8]?,
        path: String,
        _ body: (Entry) throws -> IterationControl
    ) throws {
        var bodyError: (any Error)?
        try LevelDB.iterate(db, readOptions, prefix: prefix, from: start, path: path) { entry in
            do {
                return try body(entry) == .continue
            } catch {
                bodyError = error
                return false
            }
        }
        if let bodyError {
            throw bodyError
        }
    }

    static func scan(
        _ db: OpaquePointer,
        _ readOptions: OpaquePointer,
        prefix: [UInt8],
        from start: [UInt8]?,
        limit: Int,
        path: String
    ) throws(StoreError) -> [Entry] {
        var entries: [Entry] = []
        guard limit > 0 else {
            return entries
        }
        try LevelDB.iterate(db, readOptions, prefix: prefix, from: start, path: path) { entry in
            entries.append(entry)
            return entries.count < limit
        }
        return entries
    }

    static func checkLimit(_ limit: Int) throws(StoreError) {
        guard limit >= 0 else {
            throw .invalidArgument("scan limit must not be negative (got \(limit))")
        }
    }
}
