extension Database {
    /// Calls `body` with every key and value under `prefix`, in bytewise key order, until it returns `.stop`, lending
    /// the bytes in place rather than copying them into arrays.
    ///
    /// For scans that read a whole range once, such as loading it at start: no allocation per entry, and the blocks
    /// read are not kept in the block cache (LevelDB's `fill_cache` off), so they do not evict what point reads use.
    /// The buffers are valid only during the call; copy what must outlive it. Entries come from an implicit snapshot
    /// taken when iteration starts.
    ///
    /// - Throws: an error thrown by `body`, unchanged; otherwise a `StoreError` (`.closed`, `.corruption`, ...).
    public func forEachRaw(
        prefix: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> IterationControl
    ) throws {
        try withHandlesRunningBody { handles in
            var bodyError: (any Error)?
            try LevelDB.iterateBorrowing(handles.db, prefix: prefix, path: path) { key, value in
                do {
                    return try body(key, value) == .continue
                } catch {
                    bodyError = error
                    return false
                }
            }
            if let bodyError {
                throw bodyError
            }
        }
    }
}
