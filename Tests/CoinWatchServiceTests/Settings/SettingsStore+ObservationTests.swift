@testable import CoinWatchService
import CoinWatchModel
import CoinWatchProto
import Synchronization
import Testing

@Suite("SettingsStore: change observation")
struct SettingsStoreObservationTests {
    /// One change as a handler saw it.
    struct Seen: Equatable, Sendable {
        let device: String
        let oldVersion: UInt64?
        let newVersion: UInt64?
    }

    @Test("observers get the current settings, then every later change in commit order")
    func initialThenChanges() async throws {
        try await withStore { store, _, _ in
            let existing = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")]))

            var initial: [V1.Settings] = []
            let seen = Mutex<[Seen]>([])
            store.observeChanges(initial: { initial = $0 }) { changes in
                #expect(!changes.isEmpty)
                let batch = changes.map {
                    Seen(device: $0.device.rawValue, oldVersion: $0.old?.version, newVersion: $0.new?.version)
                }
                seen.withLock { $0.append(contentsOf: batch) }
            }
            #expect(initial == [existing])

            _ = try await store.save(.init(deviceID: "phone-2", setRules: ["ETH": rule(below: "1")]))
            _ = try await store.save(.init(deviceID: "phone-1", removeSymbols: ["BTC"]))
            #expect(try await store.delete(.init(deviceID: "phone-1")) == true)
            #expect(try await store.delete(.init(deviceID: "phone-9")) == false)
            _ = await store.saveResult(.init(deviceID: "phone-2", precondition: .expectedVersion(9)))

            // Handlers run before completions, so every change is recorded by now.
            #expect(
                seen.withLock { $0 } == [
                    Seen(device: "phone-2", oldVersion: nil, newVersion: 1),
                    Seen(device: "phone-1", oldVersion: 1, newVersion: 2),
                    Seen(device: "phone-1", oldVersion: 2, newVersion: nil),
                ]
            )
        }
    }
}
