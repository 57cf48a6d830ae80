import CoinWatchStore
import CoinWatchTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing

@Suite("Concurrent use")
struct DatabaseConcurrencyTests {
    @Test("Several threads get and put at the same time")
    func concurrentGetsAndPuts() throws {
        try withDatabase { database, _ in
            try database.put(bytes("shared"), bytes("s"))
            let failures = Mutex<[String]>([])
            try runOnThreads(4) { worker in
                do {
                    for index in 0..<500 {
                        let key = bytes("w\(worker)/\(index)")
                        try database.put(key, bytes("\(worker)-\(index)"))
                        if try database.get(key) != bytes("\(worker)-\(index)") {
                            failures.withLock { $0.append("read back \(key)") }
                        }
                        if try database.get(bytes("shared")) != bytes("s") {
                            failures.withLock { $0.append("shared key") }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
            for worker in 0..<4 {
                #expect(try database.scan(prefix: bytes("w\(worker)/")).count == 500)
            }
        }
    }

    enum Outcome: Equatable, Sendable {
        case running
        case sawClosed(lastPut: Int)
        case exhausted
        case failed(String)
    }

    @Test("close() while other threads are reading and writing waits for them; later calls throw .closed")
    func closeRacesWithOperations() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let database = try Database(path: path)
            try database.put(bytes("shared"), bytes("s"))

            let workers = 3
            let outcomes = Mutex<[Outcome]>(Array(repeating: .running, count: workers))
            let warmedUp = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for worker in 0..<workers {
                group.enter()
                Thread {
                    defer { group.leave() }
                    var lastPut = -1
                    var outcome = Outcome.exhausted
                    // Bounded; in practice every worker meets the close long before the bound.
                    for index in 0..<2_000_000 {
                        if index == 100 {
                            warmedUp.signal()
                        }
                        do throws(StoreError) {
                            try database.put(bytes("w\(worker)"), bytes("\(index)"))
                            lastPut = index
                            _ = try database.get(bytes("shared"))
                            _ = try database.scan(prefix: bytes("w"), limit: 2)
                        } catch let error where error.code == .closed {
                            outcome = .sawClosed(lastPut: lastPut)
                            break
                        } catch {
                            outcome = .failed("\(error)")
                            break
                        }
                    }
                    if lastPut < 100 {
                        warmedUp.signal()
                    }
                    outcomes.withLock { $0[worker] = outcome }
                }.start()
            }
            for _ in 0..<workers {
                try #require(warmedUp.wait(timeout: .now() + 120) == .success, "workers did not start")
            }
            database.close()
            #expect(database.isClosed)
            try #require(group.wait(timeout: .now() + 120) == .success, "workers did not finish")

            let results = outcomes.withLock { $0 }
            let reopened = try Database(path: path)
            defer { reopened.close() }
            for (worker, outcome) in results.enumerated() {
                guard case .sawClosed(let lastPut) = outcome else {
                    Issue.record("worker \(worker) ended with \(outcome)")
                    continue
                }
                // Every put that reported success before the close is in the store.
                #expect(try reopened.get(bytes("w\(worker)")) == bytes("\(lastPut)"))
            }
        }
    }

    @Test("close() from inside a forEach body takes effect when the iteration returns")
    func closeFromInsideIteration() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let database = try Database(path: path)
            for key in ["a", "b", "c"] {
                try database.put(bytes(key), bytes(key))
            }
            var visited: [[UInt8]] = []
            var errorInBody: StoreError?
            try database.forEach { entry in
                visited.append(entry.key)
                if visited.count == 1 {
                    database.close()
                    #expect(database.isClosed)
                    errorInBody = #expect(throws: StoreError.self) { try database.get(bytes("a")) }
                }
                return .continue
            }
            #expect(visited == [bytes("a"), bytes("b"), bytes("c")])
            #expect(errorInBody?.code == .closed)

            // The lock was released when forEach returned.
            let reopened = try Database(path: path)
            defer { reopened.close() }
            #expect(try reopened.get(bytes("c")) == bytes("c"))
        }
    }

    @Test("close() from inside a withSnapshot body takes effect when the body returns")
    func closeFromInsideSnapshot() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let database = try Database(path: path)
            try database.put(bytes("k"), bytes("v"))
            let value = try database.withSnapshot { snapshot in
                let value = try snapshot.get(bytes("k"))
                database.close()
                let error = #expect(throws: StoreError.self) { try snapshot.get(bytes("k")) }
                #expect(error?.code == .closed)
                return value
            }
            #expect(value == bytes("v"))
            let reopened = try Database(path: path)
            reopened.close()
        }
    }

    @Test("close() from another thread waits for a running iteration")
    func closeWaitsForIteration() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("db").path
            let database = try Database(path: path)
            for index in 0..<10 {
                try database.put(bytes("k\(index)"), bytes("\(index)"))
            }
            let insideBody = DispatchSemaphore(value: 0)
            let closerStarted = DispatchSemaphore(value: 0)
            let closed = DispatchSemaphore(value: 0)
            let visited = Mutex(0)
            let closedDuringBody = Mutex(false)
            try runOnThreads(2) { worker in
                if worker == 0 {
                    do {
                        try database.forEach { _ in
                            if visited.withLock({ $0 }) == 0 {
                                insideBody.signal()
                                // Give the closer a chance to run; it must not complete while we iterate.
                                _ = closerStarted.wait(timeout: .now() + 10)
                                if closed.wait(timeout: .now() + 0.2) == .success {
                                    closedDuringBody.withLock { $0 = true }
                                }
                            }
                            visited.withLock { $0 += 1 }
                            return .continue
                        }
                    } catch {
                        Issue.record("iteration failed: \(error)")
                    }
                } else {
                    _ = insideBody.wait(timeout: .now() + 60)
                    closerStarted.signal()
                    database.close()
                    closed.signal()
                }
            }
            #expect(visited.withLock { $0 } == 10)
            #expect(closedDuringBody.withLock { $0 } == false)
            #expect(database.isClosed)
            let reopened = try Database(path: path)
            reopened.close()
        }
    }
}
