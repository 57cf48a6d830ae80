import Synchronization
/// The C objects of the open database, replaceable by a reopen.
///
/// `@unchecked Sendable`: `handles` is written only by a thread that holds the database's `UseGate` alone (a reopen,
/// between `beginReopen()` and `endReopen()`, or the final close), and read only by registered users; the gate's
/// acquiring registration and releasing exit order those accesses. It is `nil` after the final close and after a
/// reopen whose open failed.
final class HandleSlot: @unchecked Sendable {
    var handles: LevelDB.Handles?

    init(_ handles: LevelDB.Handles) {
        self.handles = handles
    }
}

/// Why writes stop after a failed write, and how they resume.
///
/// LevelDB appends each write to its log before applying it. When that append fails part-way (a full disk, say), part
/// of the record may be in the file, yet LevelDB keeps appending later writes after it; at the next open, log recovery
/// stops at the damaged record, and everything written after it is silently dropped, acknowledged or not. After a
/// failed `sync` LevelDB refuses every later write by itself, until the database is reopened.
///
/// So the first failed write stops all writes, and the next write attempt reopens the database first: recovery then
/// keeps every record before the damaged one (the failed write was never reported as done) and starts a new log.
/// Reads go on through the old handles until the reopen, which waits for running calls and turns new ones away with
/// `.ioError` while it lasts. When the reopen fails (the disk is still full), every call fails until a later write
/// reopens successfully.
extension Database {
    /// Whether writes are stopped by a failed write, until the next write reopens the database.
    public var writesStopped: Bool {
        writeFailure.withLock { $0 != nil }
    }

    /// Runs a write: reopens first if an earlier write failed, and stops later writes if this one fails.
    func writing(_ body: (LevelDB.Handles) throws(StoreError) -> Void) throws(StoreError) {
        try reopenIfWritesStopped()
        try withHandles { handles throws(StoreError) in
            do throws(StoreError) {
                try body(handles)
            } catch {
                stopWrites(error)
                throw error
            }
        }
    }

    /// Records `error` as the reason writes stop (the first one is kept).
    func stopWrites(_ error: StoreError) {
        writeFailure.withLock { failure in
            if failure == nil {
                failure = error
            }
        }
    }

    /// The error for a call that the gate turned away (`.closing`, `.reopening`), or that it admitted (`.admitted`)
    /// but found without handles because the last reopen failed.
    func unavailable(_ entry: UseGate.Entry) -> StoreError {
        let failure = writeFailure.withLock { $0 }
        let reason = failure.map { " after a failed write (\($0.message))" } ?? ""
        let isDiskFull = failure?.isDiskFull ?? false
        switch entry {
        case .closing:
            return .closed(path)
        case .reopening:
            return StoreError(
                code: .ioError, message: "database at \(path) is being reopened\(reason); retry", isDiskFull: isDiskFull)
        case .admitted:
            return StoreError(code: .ioError, message: "database at \(path) could not be reopened\(reason); "
                + "the next write tries again", isDiskFull: isDiskFull)
        }
    }

    /// Reopens the database if writes are stopped: waits for running calls to finish, closes the handles, opens
    /// them again (never creating a database: a directory emptied meanwhile is an error, not a fresh store).
    private func reopenIfWritesStopped() throws(StoreError) {
        guard let failure = writeFailure.withLock({ $0 }) else {
            return
        }
        guard !gate.callerRunsBody else {
            // Waiting for the running calls would wait for the caller's own forEach or withSnapshot.
            throw StoreError(code: failure.code, message: "writes to \(path) are stopped after a failed write "
                + "(\(failure.message)); the database is reopened by the next write made outside forEach and "
                + "withSnapshot", isDiskFull: failure.isDiskFull)
        }
        // Another thread may be reopening right now (say the alert thread's write came first): wait for its
        // outcome rather than fail a write that the reopen is about to make possible, then look again.
        while !gate.beginReopen() {
            if gate.isClosing {
                throw unavailable(.closing)
            }
            gate.waitWhileReopening()
            if writeFailure.withLock({ $0 }) == nil {
                return
            }
        }
        var reopenError: StoreError?
        // Another thread may have reopened while this one waited for its turn.
        if writeFailure.withLock({ $0 }) != nil {
            if let handles = slot.handles {
                slot.handles = nil
                LevelDB.close(handles)
            }
            var reopenOptions = options
            reopenOptions.createIfMissing = false
            reopenOptions.errorIfExists = false
            do {
                slot.handles = try LevelDB.open(path: path, options: reopenOptions)
                writeFailure.withLock { $0 = nil }
            } catch {
                reopenError = StoreError(
                    code: error.code,
                    message: "\(error.message) (reopening after a failed write: \(failure.message))",
                    isDiskFull: error.isDiskFull || failure.isDiskFull)
            }
        }
        if gate.endReopen() {
            closeHandles()
        }
        if let reopenError {
            throw reopenError
        }
    }
}
