import CoinWatchStore
import CoinWatchTestSupport
import Dispatch
import Foundation
import Testing

/// The UTF-8 bytes of `text`, for readable keys and values.
func bytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// Opens a database in a fresh temporary directory (a not yet existing `db` subdirectory, which LevelDB creates),
/// runs `body`, and closes the database and removes the directory afterwards.
func withDatabase<R>(
    options: Database.Options = Database.Options(),
    _ body: (Database, String) throws -> R
) throws -> R {
    try withTemporaryDirectory(prefix: "store-test") { directory in
        let path = directory.appendingPathComponent("db").path
        let database = try Database(path: path, options: options)
        defer { database.close() }
        return try body(database, path)
    }
}

/// Runs `body` on `count` new threads at once and returns when all have finished, or fails the test if they
/// have not finished after a generous bound (a hang guard, not a timing assertion).
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) throws {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    let finished = group.wait(timeout: .now() + 120)
    try #require(finished == .success, "worker threads did not finish")
}
