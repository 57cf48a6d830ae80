/// An open LevelDB database: a sorted map from byte-string keys to byte-string values, stored in one directory.
///
/// One `Database` may be shared by any number of threads and tasks; LevelDB serialises writes internally and
/// reads run in parallel. A directory can be open through only one handle at a time (LevelDB locks it), so a second
/// open, here or in another process, fails with `.alreadyInUse`.
///
/// Call `close()` when done: it releases the directory lock at a predictable moment. Closing while other calls are
/// running is safe; it waits for them, and calls that start afterwards throw `.closed`.
///
/// `@unchecked Sendable`: the only stored state besides immutable values is `handles`, C objects that LevelDB
/// documents as safe for concurrent use, and `gate`. Every use of `handles` happens between `gate.enter()` returning
/// `true` and the matching `gate.leave()`, and `handles` are freed only once `gate` says no such use remains and
/// none can start, so no thread can touch them after they are freed.
public final class Database: @unchecked Sendable {
    /// The directory holding the database, as given to `init`.
    public let path: String
    /// The options the database was opened with.
    public let options: Options

    let handles: LevelDB.Handles
    private let gate = UseGate()

    /// Opens the database in the directory `path`, creating it if `options.createIfMissing` allows.
    ///
    /// - Throws: `.alreadyInUse` if another handle or process has the directory open, `.notFound` if it holds no
    ///   database and `createIfMissing` is `false`, `.corruption` if its metadata is damaged (see `repair(path:)`),
    ///   `.invalidArgument` for a bad path or option, `.ioError` for file-system failures.
    public init(path: String, options: Options = Options()) throws(StoreError) {
        self.handles = try LevelDB.open(path: path, options: options)
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

    /// Runs `body` with the handles, which stay valid until it returns; throws `.closed` once closing has begun.
    func withHandles<R>(_ body: (LevelDB.Handles) throws(StoreError) -> R) throws(StoreError) -> R {
        guard enter() else {
            throw .closed(path)
        }
        defer { leave() }
        return try body(handles)
    }

    /// Like `withHandles`, for operations that run caller-supplied code while holding the handles, so that a
    /// `close()` from that code does not wait for itself.
    func withHandlesRunningBody<R>(_ body: (LevelDB.Handles) throws -> R) throws -> R {
        guard enter() else {
            throw StoreError.closed(path)
        }
        gate.enterBody()
        defer {
            gate.leaveBody()
            leave()
        }
        return try body(handles)
    }

    private func enter() -> Bool {
        if gate.enter() {
            return true
        }
        leave()
        return false
    }

    private func leave() {
        if gate.leave() {
            closeHandles()
        }
    }

    private func closeHandles() {
        if gate.claimFinalClose() {
            LevelDB.close(handles)
        }
    }
}
