@testable import CoinWatchService
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import Synchronization
import Testing

@Suite("SettingsStore: expected_version")
struct SettingsStoreVersionTests {
    @Test("a matching expected_version saves; a stale one is ABORTED naming the current version")
    func matchAndMismatch() async throws {
        try await withStore { store, _, _ in
            _ = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))
            _ = try await store.save(.init(deviceID: "phone-1", setRules: ["ETH": rule(below: "1")]))

            let matched = try await store.save(
                .init(deviceID: "phone-1", setRules: ["SOL": rule(below: "1")], precondition: .expectedVersion(2))
            )
            #expect(matched.version == 3)

            let stale = await store.saveResult(
                .init(deviceID: "phone-1", removeSymbols: ["BTC"], precondition: .expectedVersion(2))
            )
            #expect(
                stale.failure
                    == RPCError(code: .aborted, message: "expected version 2 but device 'phone-1' is at version 3")
            )
            #expect(store.settings(for: try device("phone-1")) == matched)
        }
    }

    @Test("expected_version 0 creates a new device and refuses an existing one")
    func versionZero() async throws {
        try await withStore { store, _, _ in
            let created = try await store.save(
                .init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")], precondition: .expectedVersion(0))
            )
            #expect(created.version == 1)

            let again = await store.saveResult(
                .init(deviceID: "phone-1", setRules: ["BTC": rule(below: "2")], precondition: .expectedVersion(0))
            )
            #expect(
                again.failure
                    == RPCError(code: .aborted, message: "expected version 0 but device 'phone-1' is at version 1")
            )

            let missing = await store.saveResult(.init(deviceID: "phone-2", precondition: .expectedVersion(4)))
            #expect(
                missing.failure
                    == RPCError(code: .aborted, message: "expected version 4 but device 'phone-2' has no settings")
            )
            #expect(store.settings(for: try device("phone-2")) == nil)
        }
    }

    @Test("delete honours expected_version")
    func deleteWithExpectedVersion() async throws {
        try await withStore { store, _, _ in
            _ = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))
            let stale = await store.deleteResult(.init(deviceID: "phone-1", precondition: .expectedVersion(7)))
            #expect(
                stale.failure
                    == RPCError(code: .aborted, message: "expected version 7 but device 'phone-1' is at version 1")
            )
            #expect(store.settings(for: try device("phone-1")) != nil)
            #expect(try await store.delete(.init(deviceID: "phone-1", precondition: .expectedVersion(1))) == true)
            #expect(try await store.delete(.init(deviceID: "phone-1", precondition: .expectedVersion(0))) == false)
        }
    }

    /// docs/PROTOCOL.md: a delete forgets the device, so versions start again at 1 and a version read before the
    /// delete can match settings made after it; `expected_version: 0` creates only a device that does not exist.
    @Test("after a delete the device is new: version 0, then 1 again, and an old version can match again")
    func versionsAfterDeleteAndRecreate() async throws {
        try await withStore { store, _, _ in
            _ = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))
            #expect(try await store.delete(.init(deviceID: "phone-1")) == true)
            let recreated = try await store.save(
                .init(deviceID: "phone-1", setRules: ["ETH": rule(below: "2")], precondition: .expectedVersion(0)))
            #expect(recreated.version == 1)
            // A client that read version 1 before the delete passes the check against the new settings.
            let stale = try await store.save(
                .init(deviceID: "phone-1", setRules: ["SOL": rule(below: "3")], precondition: .expectedVersion(1)))
            #expect(stale.version == 2)
            #expect(stale.rules.keys.sorted() == ["ETH", "SOL"])
        }
    }

    @Test("read-modify-write from several threads: one winner per version, nothing lost")
    func concurrentOptimisticSaves() async throws {
        let threads = 4
        let attemptsPerThread = 25
        try await withStore { store, _, _ in
            let phone = try device("phone-1")
            // Per thread: the versions its successful saves produced, and how many attempts were ABORTED.
            let wins = Mutex<[Int: [UInt64]]>([:])
            let aborts = Mutex<[Int: Int]>([:])
            let unexpected = Mutex<[String]>([])
            try runOnThreads(threads) { thread in
                var myWins: [UInt64] = []
                var myAborts = 0
                for _ in 0..<attemptsPerThread {
                    let seen = store.settings(for: phone)?.version ?? 0
                    // Each thread owns one symbol and sets it to its own success count so far, plus one.
                    let request = V1.SaveSettingsRequest(
                        deviceID: phone.rawValue,
                        setRules: ["T\(thread)": rule(below: String(myWins.count + 1))],
                        precondition: .expectedVersion(seen)
                    )
                    switch try? store.saveAndWait(request) {
                    case .success(let settings)?:
                        if settings.version != seen + 1 {
                            unexpected.withLock { $0.append("saved at \(settings.version) after seeing \(seen)") }
                        }
                        myWins.append(settings.version)
                    case .failure(let error)? where error.code == .aborted
                        && error.message.hasPrefix("expected version \(seen) but device 'phone-1' is at version "):
                        myAborts += 1
                    case let other:
                        unexpected.withLock { $0.append("unexpected outcome \(String(describing: other))") }
                    }
                }
                wins.withLock { $0[thread] = myWins }
                aborts.withLock { $0[thread] = myAborts }
            }

            #expect(unexpected.withLock { $0 }.isEmpty)
            let allWins = wins.withLock { $0 }
            let winningVersions = allWins.values.flatMap { $0 }.sorted()
            let abortCount = aborts.withLock { $0.values.reduce(0, +) }
            #expect(winningVersions.count + abortCount == threads * attemptsPerThread)
            // Exactly one success per version, with no gaps: versions 1...n.
            #expect(!winningVersions.isEmpty)
            #expect(winningVersions == (0..<winningVersions.count).map { UInt64($0 + 1) })
            let final = try #require(store.settings(for: phone))
            #expect(final.version == UInt64(winningVersions.count))
            // Nothing lost: each thread's symbol holds its own number of successes.
            for thread in 0..<threads {
                let count = allWins[thread]?.count ?? 0
                let expected: V1.AlertRule? = count == 0 ? nil : rule(below: String(count))
                #expect(final.rules["T\(thread)"] == expected, "thread \(thread)")
            }
        }
    }
}
