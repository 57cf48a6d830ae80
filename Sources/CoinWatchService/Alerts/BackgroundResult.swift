import CoinWatchRPC
import Dispatch
import Foundation
import CoinWatchStore
import Synchronization

/// A value computed on a thread of its own while the creating thread does other work; `value()` joins it.
///
/// Start-up uses it to read one key range of the store while the caller works through another, so both cores work.
final class BackgroundResult<Value: Sendable>: Sendable {
    private let outcome = Mutex<Result<Value, any Error>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    init(name: String, _ work: @escaping @Sendable () throws -> Value) {
        NamedThread.start(name: name) { [self] in
            let result = Result { try work() }
            outcome.withLock { $0 = result }
            finished.signal()
        }
    }

    /// Waits for the work and returns what it returned, or throws what it threw. Any number of calls: a failure
    /// path can call it just to be sure the work no longer touches what it is about to close.
    func value() throws -> Value {
        finished.wait()
        finished.signal()
        let result = outcome.withLock { $0 }
        guard let result else {
            throw StoreError(code: .unknown, message: "background work finished without a result")
        }
        return try result.get()
    }
}
