import Foundation

/// Runs `body` on a thread of its own and waits for it without holding one of the cooperative pool's threads.
///
/// Blocking work in a test — a child process, a blocking socket, a series of `openssl` runs — would otherwise sit
/// on one of the few threads every async test shares, and on a busy machine starve the tests beside it past
/// their timeouts. Report outcomes from `body` as its result and check them in the test: expectations recorded
/// on another thread may not reach the test.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}
