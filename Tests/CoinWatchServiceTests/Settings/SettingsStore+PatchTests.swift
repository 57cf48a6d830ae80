@testable import CoinWatchService
import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import Foundation
import Testing

@Suite("SettingsStore: patch semantics")
struct SettingsStorePatchTests {
    @Test("saving one symbol keeps the others; versions count saves")
    func patchKeepsOtherSymbols() async throws {
        try await withStore { store, _, _ in
            let first = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "60000")]))
            #expect(first.version == 1)
            #expect(first.deviceID == "phone-1")
            #expect(first.rules == ["BTC": rule(below: "60000")])

            let second = try await store.save(.init(deviceID: "phone-1", setRules: ["ETH": rule(above: "4000")]))
            #expect(second.version == 2)
            #expect(second.rules == ["BTC": rule(below: "60000"), "ETH": rule(above: "4000")])

            let third = try await store.save(
                .init(deviceID: "phone-1", setRules: ["btc": rule(below: "58000", above: "70000.5")])
            )
            #expect(third.version == 3)
            #expect(third.rules == ["BTC": rule(below: "58000", above: "70000.5"), "ETH": rule(above: "4000")])

            #expect(store.settings(for: try device("phone-1")) == third)
            #expect(store.getSettings(.init(deviceID: "phone-1")) == .success(third))
        }
    }

    @Test("remove_symbols drops only the named symbols")
    func explicitRemoval() async throws {
        try await withStore { store, _, _ in
            _ = try await store.save(
                .init(
                    deviceID: "phone-1",
                    setRules: ["BTC": rule(below: "1"), "ETH": rule(below: "2"), "SOL": rule(above: "3")]
                )
            )
            let saved = try await store.save(.init(deviceID: "phone-1", removeSymbols: ["eth", "DOGE"]))
            #expect(saved.version == 2)
            #expect(saved.rules == ["BTC": rule(below: "1"), "SOL": rule(above: "3")])
        }
    }

    @Test("a rule with both sides off removes the symbol; the device keeps existing")
    func allOffRuleRemovesSymbol() async throws {
        try await withStore { store, _, _ in
            _ = try await store.save(
                .init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1"), "ETH": rule(below: "2")])
            )
            let zeroed = try await store.save(
                .init(deviceID: "phone-1", setRules: ["BTC": rule(below: "0", above: "0.000")])
            )
            #expect(zeroed.rules == ["ETH": rule(below: "2")])

            // The original app's first-launch defaults: every threshold zero.
            let defaults = try await store.save(
                .init(deviceID: "phone-2", setRules: ["BTC": rule(below: "0", above: "0"), "ETH": V1.AlertRule()])
            )
            #expect(defaults.version == 1)
            #expect(defaults.rules.isEmpty)
            #expect(store.settings(for: try device("phone-2")) == defaults)
        }
    }

    @Test("one side zero is stored as absent, and decimals in their smallest scale")
    func rulesAreStoredCanonically() async throws {
        try await withStore { store, _, _ in
            let saved = try await store.save(
                .init(
                    deviceID: "phone-1",
                    setRules: [
                        "BTC": V1.AlertRule(
                            below: V1.Decimal(mantissa: 6_425_050, scale: 2),
                            above: V1.Decimal(mantissa: 0, scale: 3)
                        ),
                    ]
                )
            )
            #expect(saved.rules["BTC"] == V1.AlertRule(below: V1.Decimal(mantissa: 642_505, scale: 1), above: nil))
        }
    }

    @Test("a save that changes nothing still bumps the version and the time")
    func emptySaveIsAWrite() async throws {
        try await withStore { store, _, _ in
            let before = WallClock.milliseconds()
            let first = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "5")]))
            let second = try await store.save(.init(deviceID: "phone-1"))
            let after = WallClock.milliseconds()
            #expect(second.version == 2)
            #expect(second.rules == first.rules)
            #expect(first.updatedAtMs >= before && first.updatedAtMs <= after)
            #expect(second.updatedAtMs >= first.updatedAtMs && second.updatedAtMs <= after)
        }
    }

    @Test("delete reports whether settings existed, and a later save starts again at version 1")
    func deleteSettings() async throws {
        try await withStore { store, _, _ in
            _ = try await store.save(.init(deviceID: "phone-1", setRules: ["BTC": rule(below: "5")]))
            _ = try await store.save(.init(deviceID: "phone-2", setRules: ["ETH": rule(below: "5")]))

            #expect(try await store.delete(.init(deviceID: "phone-1")) == true)
            #expect(store.settings(for: try device("phone-1")) == nil)
            #expect(
                store.getSettings(.init(deviceID: "phone-1"))
                    == .failure(RPCError(code: .notFound, message: "no settings for device 'phone-1'"))
            )
            #expect(store.settings(for: try device("phone-2"))?.version == 1)
            #expect(try await store.delete(.init(deviceID: "phone-1")) == false)

            let recreated = try await store.save(.init(deviceID: "phone-1", setRules: ["SOL": rule(above: "9")]))
            #expect(recreated.version == 1)
            #expect(recreated.rules == ["SOL": rule(above: "9")])
        }
    }

    @Test("both spellings of a vendor UUID name one device")
    func uuidNormalisation() async throws {
        try await withStore { store, _, _ in
            let upper = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
            let legacy = "3f2504e0_4f89_11d3_9a0c_0305e82c3301"
            let first = try await store.save(.init(deviceID: upper, setRules: ["BTC": rule(below: "1")]))
            #expect(first.deviceID == "3f2504e0-4f89-11d3-9a0c-0305e82c3301")

            let second = try await store.save(.init(deviceID: legacy, setRules: ["ETH": rule(below: "2")]))
            #expect(second.version == 2)
            #expect(second.rules.keys.sorted() == ["BTC", "ETH"])
            #expect(store.deviceCount == 1)
            #expect(store.getSettings(.init(deviceID: legacy)) == .success(second))
            #expect(store.getSettings(.init(deviceID: upper.lowercased())) == .success(second))
            #expect(try await store.delete(.init(deviceID: upper)) == true)
            #expect(store.deviceCount == 0)
        }
    }
}
