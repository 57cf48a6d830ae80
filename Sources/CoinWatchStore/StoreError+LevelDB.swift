extension StoreError {
    /// Classifies a failure reported by LevelDB. This is the only place that interprets LevelDB's error text.
    ///
    /// LevelDB's C API reports failures only as the text of `Status::ToString()`, which is
    /// `"<kind>: <context>: <detail>"` with `<kind>` one of `NotFound`, `Corruption`, `Not implemented`,
    /// `Invalid argument` and `IO error`. The prefix gives the code, with two refinements:
    ///
    /// - A lock conflict is an `IO error` whose context is `lock <dir>/LOCK`. The detail is
    ///   `already held by process` when another handle in this process holds it (LevelDB keeps an in-process table
    ///   of held locks), or the `strerror` of the failed `fcntl(F_SETLK)` when another process holds it
    ///   (`Resource temporarily unavailable` for EAGAIN, `Permission denied` for EACCES). Any of these becomes
    ///   `.alreadyInUse`, with a message naming the directory.
    /// - Opening a missing database with `createIfMissing == false` is reported as
    ///   `Invalid argument: <dir>: does not exist (create_if_missing is false)`; it becomes `.notFound`.
    ///
    /// A full disk or quota is reported (as an `IO error`) with the `strerror` text of `ENOSPC` (`No space left on
    /// device`) or `EDQUOT` (`Disk quota exceeded`); it sets `isDiskFull`, so callers need not read the text.
    ///
    /// - Parameters:
    ///   - text: LevelDB's message, verbatim.
    ///   - operation: what was being done ("open", "get", ...), for the message.
    ///   - path: the database directory, for the message.
    init(levelDBStatus text: String, operation: String, path: String) {
        let code: Code
        if text.hasPrefix("IO error: lock "), Self.lockConflictDetails.contains(where: { text.hasSuffix($0) }) {
            self.init(
                code: .alreadyInUse,
                message: "database directory \(path) is already in use by another open handle "
                    + "in this process or by another process (LevelDB: \(text))"
            )
            return
        } else if text.hasPrefix("Invalid argument: "), text.hasSuffix("does not exist (create_if_missing is false)") {
            code = .notFound
        } else if text.hasPrefix("Corruption: ") {
            code = .corruption
        } else if text.hasPrefix("IO error: ") {
            code = .ioError
        } else if text.hasPrefix("NotFound: ") {
            code = .notFound
        } else if text.hasPrefix("Invalid argument: ") {
            code = .invalidArgument
        } else if text.hasPrefix("Not implemented: ") {
            code = .notSupported
        } else {
            code = .unknown
        }
        let isDiskFull = Self.diskFullDetails.contains(where: { text.contains($0) })
        self.init(code: code, message: "\(operation) \(path): \(text)", isDiskFull: isDiskFull)
    }

    /// `strerror(ENOSPC)` and `strerror(EDQUOT)` as glibc words them.
    private static let diskFullDetails = ["No space left on device", "Disk quota exceeded"]

    private static let lockConflictDetails = [
        ": already held by process",
        ": Resource temporarily unavailable",
        ": Permission denied",
    ]
}
