extension Database {
    /// Returns the value stored for `key`: `nil` when the key is absent, `[]` when it holds an empty value.
    public func get(_ key: [UInt8]) throws(StoreError) -> [UInt8]? {
        try withHandles { handles throws(StoreError) in
            try LevelDB.get(handles.db, handles.readOptions, key: key, path: path)
        }
    }

    /// Stores `value` for `key`, replacing any previous value.
    ///
    /// - Parameter sync: when `true`, returns only after the write reached stable storage, so it survives a machine
    ///   crash; otherwise it survives a process crash but may be lost with the machine.
    /// - Throws: what LevelDB reports. A failed write stops writes until the next one has reopened the database
    ///   (see `writesStopped`); that reopen's failure is thrown too.
    public func put(_ key: [UInt8], _ value: [UInt8], sync: Bool = false) throws(StoreError) {
        try writing { handles throws(StoreError) in
            try LevelDB.put(handles, key: key, value: value, sync: sync, path: path)
        }
    }

    /// Removes `key`; removing an absent key succeeds.
    ///
    /// - Parameter sync: as for `put(_:_:sync:)`.
    public func delete(_ key: [UInt8], sync: Bool = false) throws(StoreError) {
        try writing { handles throws(StoreError) in
            try LevelDB.delete(handles, key: key, sync: sync, path: path)
        }
    }

    /// Applies all of `batch` atomically: concurrent readers, snapshots and a reopen after a crash see either none
    /// of its changes or all of them.
    ///
    /// - Parameter sync: as for `put(_:_:sync:)`.
    public func write(_ batch: WriteBatch, sync: Bool = false) throws(StoreError) {
        try writing { handles throws(StoreError) in
            try LevelDB.write(handles, batch: batch, sync: sync, path: path)
        }
    }
}
