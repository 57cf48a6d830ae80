import CoinWatchCore
import Dispatch
import Synchronization

/// Runs async work from the synchronous top level of the tool and waits for it.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// `MonotonicClock` in unsigned nanoseconds, for the latency arithmetic of the load tools.
func nowNanos() -> UInt64 { UInt64(MonotonicClock.nanoseconds()) }
