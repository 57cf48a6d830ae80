import Synchronization

/// An open LevelDB database: a sorted map from byte-string keys to byte-string values, stored in one directory.
///
/// One `Database` may be shared by any number of threads and tasks; LevelDB serialises writes internally and
/// reads run in parallel. A directory can be open through only one handle at a time (LevelDB locks it), so a second
/// open, here or in another process, fails with `.alreadyInUse`.
///
/// Call `close()` when done: it releases the directory lock at a predictable moment. Closing while other calls are
/// running is safe; it waits for them, and calls that start afterwards throw `.closed`.
///
/// A failed write stops all writes until the database has been reopened, which the next write does by itself (see
/// `writesStopped`): LevelDB may have left part of the failed record in its log, and records appended after it could
/// be lost at the next open.
///
/// `@unchecked Sendable`: the only stored state besides immutable values is `slot`, holding C objects that LevelDB
/// documents as safe for concurrent use, `gate`, and the `Mutex` `writeFailure`. Every use of the handles happens
/// between `gate.enter()` admitting the caller and the matching `gate.leave()`; they are replaced only by a reopen,
/// which holds the gate alone (every other user gone, new ones turned away), and freed only once `gate` says no use
/// remains and none can start, so no thread can touch them while or after they are freed.
public final class Database: @unchecked Sendable {
    /// The directory holding the database, as given to `init`.
    public let path: String
    /// The options the database was opened with.
    public let options: Options

    let slot: HandleSlot
    let gate = UseGate()
    /// The write failure that stopped writes until the database is reopened; `nil` while writes may go ahead.
    let writeFailure = Mutex<StoreError?>(nil)

    /// Opens the database in the directory `path`, creating it if `options.createIfMissing` allows.
    ///
    /// - Throws: `.alreadyInUse` if another handle or process has the directory open, `.notFound` if it holds no
    ///   database and `createIfMissing` is `false`, `.corruption` if its metadata is damaged (see `repair(path:)`),
    ///   `.invalidArgument` for a bad path or option, `.ioError` for file-system failures.
    public init(path: String, options: Options = Options()) throws(StoreError) {
        self.slot = HandleSlot(try LevelDB.open(path: path, options: options))
        self.path = path
        self.options = options
    }

    deinit {
        assert(gate.isClosing, "Database at \(path) was deinitialised without close()")
        // No call can be running: each one keeps `self` alive. Closing here keeps release builds from leaking the
        // handles and the directory lock.
        _ = gate.beginClose()
        closeHandles()
    }

    /// Closes the database and releases its directory lock.
    ///
    /// Waits for calls already running on other threads to finish; calls that start later throw `.closed`. Closing
    /// twice is harmless, but only the first call waits. Called from inside a `forEach` or `withSnapshot` body of
    /// this database, it cannot wait for its own caller: the database is then closed when that body's call returns,
    /// and every call made in the meantime throws `.closed`.
    public func close() {
        switch gate.beginClose() {
        case .alreadyClosing, .deferred:
            return
        case .closeNow:
            closeHandles()
        case .closeAfterDrain:
            gate.waitUntilDrained()
            closeHandles()
        }
    }

    /// Whether `close()` has been called. Once `true`, every operation throws `.closed`.
    public var isClosed: Bool {
        gate.isClosing
    }

    // MARK: Guarded access to the handles

    /// Runs `body` with the handles, which stay valid until it returns; throws `.closed` once closing has begun, and
    /// `.ioError` while the database is being (or could not be) reopened after a failed write.
    func withHandles<R>(_ body: (LevelDB.Handles) throws(StoreError) -> R) throws(StoreError) -> R {
        if let refusal = enter() {
            throw unavailable(refusal)
        }
        defer { leave() }
        guard let handles = slot.handles else {
            throw unavailable(.admitted)
        }
        return try body(handles)
    }

    /// Like `withHandles`, for operations that run caller-supplied code while holding the handles, so that a
    /// `close()` from that code does not wait for itself.
    func withHandlesRunningBody<R>(_ body: (LevelDB.Handles) throws -> R) throws -> R {
        if let refusal = enter() {
            throw unavailable(refusal)
        }
        defer { leave() }
        guard let handles = slot.handles else {
            throw unavailable(.admitted)
        }
        gate.enterBody()
        defer { gate.leaveBody() }
        return try body(handles)
    }

    /// Registers with the gate; returns why the caller was turned away (already unregistered), nil when admitted.
    private func enter() -> UseGate.Entry? {
        let entry = gate.enter()
        if entry == .admitted {
            return nil
        }
        leave()
        return entry
    }

    private func leave() {
        if gate.leave() {
            closeHandles()
        }
    }

    func closeHandles() {
        if gate.claimFinalClose(), let handles = slot.handles {
            slot.handles = nil
            LevelDB.close(handles)
        }
    }
}
