@testable import CoinWatchService
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import Testing

/// One invalid request and the exact message it must get.
struct InvalidSave: Sendable, CustomTestStringConvertible {
    let name: String
    let request: V1.SaveSettingsRequest
    let message: String

    var testDescription: String { name }
}

private let symbolRule = "must be 2–10 characters of A-Z 0-9"
private let deviceRule = "must be 1–128 characters of A-Z a-z 0-9 . _ : -"

private let invalidSaves: [InvalidSave] = [
    InvalidSave(
        name: "empty device id",
        request: .init(deviceID: "", setRules: ["BTC": rule(below: "1")]),
        message: "device_id: \(deviceRule) (got 0 characters)"
    ),
    InvalidSave(
        name: "device id of 129 characters",
        request: .init(deviceID: String(repeating: "a", count: 129)),
        message: "device_id: \(deviceRule) (got 129 characters)"
    ),
    InvalidSave(
        name: "device id with a space",
        request: .init(deviceID: "my phone"),
        message: "device_id: \(deviceRule) (found ' ')"
    ),
    InvalidSave(
        name: "symbol of one character",
        request: .init(deviceID: "phone-1", setRules: ["B": rule(below: "1")]),
        message: "set_rules key: \(symbolRule) (got 'B')"
    ),
    InvalidSave(
        name: "symbol of eleven characters",
        request: .init(deviceID: "phone-1", setRules: ["ABCDEFGHIJK": rule(below: "1")]),
        message: "set_rules key: \(symbolRule) (got 'ABCDEFGHIJK')"
    ),
    InvalidSave(
        name: "symbol with a dash",
        request: .init(deviceID: "phone-1", setRules: ["BT-C": rule(below: "1")]),
        message: "set_rules key: \(symbolRule) (got 'BT-C')"
    ),
    InvalidSave(
        name: "bad symbol in remove_symbols",
        request: .init(deviceID: "phone-1", removeSymbols: ["ETH", "e"]),
        message: "remove_symbols[1]: \(symbolRule) (got 'e')"
    ),
    InvalidSave(
        name: "two keys naming one symbol",
        request: .init(deviceID: "phone-1", setRules: ["btc": rule(below: "1"), "BTC": rule(below: "2")]),
        message: "set_rules: keys 'BTC' and 'btc' both name BTC; give each symbol once"
    ),
    InvalidSave(
        name: "symbol both set and removed",
        request: .init(deviceID: "phone-1", setRules: ["BTC": rule(below: "1")], removeSymbols: ["ETH", "btc"]),
        message: "remove_symbols[1]: BTC is also in set_rules; a symbol may not be both set and removed"
    ),
    InvalidSave(
        name: "negative below",
        request: .init(deviceID: "phone-1", setRules: ["btc": rule(below: "-1.5")]),
        message: "set_rules[BTC].below: must not be negative (got -1.5)"
    ),
    InvalidSave(
        name: "negative above",
        request: .init(deviceID: "phone-1", setRules: ["ETH": rule(above: "-3")]),
        message: "set_rules[ETH].above: must not be negative (got -3)"
    ),
    InvalidSave(
        name: "below above above",
        request: .init(deviceID: "phone-1", setRules: ["BTC": rule(below: "70000", above: "60000")]),
        message: "set_rules[BTC]: below (70000) must be less than above (60000)"
    ),
    InvalidSave(
        name: "below equal to above",
        request: .init(deviceID: "phone-1", setRules: ["BTC": rule(below: "5.0", above: "5")]),
        message: "set_rules[BTC]: below (5) must be less than above (5)"
    ),
    InvalidSave(
        name: "scale 19",
        request: .init(
            deviceID: "phone-1",
            setRules: ["BTC": V1.AlertRule(above: V1.Decimal(mantissa: 1, scale: 19))]
        ),
        message: "set_rules[BTC].above: scale must be 0–18 (got 19)"
    ),
    InvalidSave(
        name: "65 symbols",
        request: .init(
            deviceID: "phone-1",
            setRules: Dictionary(uniqueKeysWithValues: (1...65).map { ("S\($0)", rule(below: "1")) })
        ),
        message: "set_rules: a device may have at most 64 symbols (this save sets 65)"
    ),
]

@Suite("SettingsStore: validation")
struct SettingsStoreValidationTests {
    @Test("each invalid field gets INVALID_ARGUMENT naming the field and the rule", arguments: invalidSaves)
    func invalidSave(_ invalid: InvalidSave) async throws {
        try await withStore { store, _, _ in
            let result = await store.saveResult(invalid.request)
            #expect(result.failure == RPCError(code: .invalidArgument, message: invalid.message))
            #expect(store.deviceCount == 0)
            #expect(store.stats.writesCommitted == 0)
        }
    }

    @Test("the symbol limit counts the symbols after the patch")
    func symbolLimitAfterPatch() async throws {
        try await withStore { store, _, _ in
            let sixty = Dictionary(uniqueKeysWithValues: (1...60).map { ("S\($0)", rule(below: "1")) })
            _ = try await store.save(.init(deviceID: "phone-1", setRules: sixty))

            let fiveMore = Dictionary(uniqueKeysWithValues: (61...65).map { ("S\($0)", rule(below: "1")) })
            let refused = await store.saveResult(.init(deviceID: "phone-1", setRules: fiveMore))
            #expect(
                refused.failure == RPCError(
                    code: .invalidArgument,
                    message: "set_rules: a device may have at most 64 symbols (this save would leave it with 65)"
                )
            )
            #expect(store.settings(for: try device("phone-1"))?.version == 1)

            // The same five fit when one existing symbol goes in the same save; turning one off also frees a slot.
            var patch = fiveMore
            patch["S1"] = rule(below: "0")
            let accepted = try await store.save(.init(deviceID: "phone-1", setRules: patch))
            #expect(accepted.rules.count == 64)
            #expect(accepted.rules["S1"] == nil)
            #expect(accepted.version == 2)

            // 65 all-off rules on a new device remove everything rather than exceeding the limit.
            let allOff = Dictionary(uniqueKeysWithValues: (1...65).map { ("S\($0)", rule(below: "0")) })
            let empty = try await store.save(.init(deviceID: "phone-2", setRules: allOff))
            #expect(empty.rules.isEmpty)
        }
    }

    @Test("GetSettings and DeleteSettings validate the device id too")
    func otherMethodsValidateDeviceID() async throws {
        try await withStore { store, _, _ in
            let expected = RPCError(code: .invalidArgument, message: "device_id: \(deviceRule) (found '/')")
            #expect(store.getSettings(.init(deviceID: "a/b")).failure == expected)
            #expect(await store.deleteResult(.init(deviceID: "a/b")).failure == expected)
        }
    }
}
