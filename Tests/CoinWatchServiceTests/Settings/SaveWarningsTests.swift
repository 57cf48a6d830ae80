import CoinWatchModel
import CoinWatchProto
import Testing
@testable import CoinWatchService

@Suite("SaveSettings warnings")
struct SaveWarningsTests {
    static func rule(below: Int64? = nil, above: Int64? = nil) -> V1.AlertRule {
        V1.AlertRule(below: below.map { V1.Decimal(mantissa: $0) }, above: above.map { V1.Decimal(mantissa: $0) })
    }

    @Test("a rule for a symbol never priced is warned about by its canonical name, in symbol order; an off rule is not")
    func unpriced() throws {
        var request = V1.SaveSettingsRequest(deviceID: "phone-1")
        request.setRules["btc"] = Self.rule(below: 1)
        request.setRules["btcc"] = Self.rule(above: 2)
        request.setRules["NOTACOIN"] = Self.rule(below: 1, above: 5)
        request.setRules["OFFCOIN"] = Self.rule(below: 0)
        request.setRules["ETH"] = Self.rule(below: 1)
        let command = try SaveCommand(validating: request)
        let priced: Set<String> = ["BTC"]
        let unpriced = SaveWarnings.unpriced(in: command) { priced.contains($0.rawValue) }
        #expect(unpriced.map(\.rawValue) == ["BTCC", "ETH", "NOTACOIN"])
        #expect(SaveWarnings.unpriced(in: command) { _ in true }.isEmpty)
    }

    @Test("warnings appended to an encoded answer decode with its settings, one per symbol in the order given")
    func appended() throws {
        let settings = V1.Settings(deviceID: "phone-1", rules: ["BTCC": Self.rule(above: 2)], version: 3)
        let encoded = V1.SaveSettingsResponse(settings: settings).serializedBytes()
        #expect(SaveWarnings.appending(unpriced: [], to: encoded) == encoded)
        let symbols = try ["BTCC", "ABCDEFGHIJ", "XY"].map { try Symbol(validating: $0, field: "test") }
        let response = try V1.SaveSettingsResponse(serializedBytes: SaveWarnings.appending(unpriced: symbols, to: encoded))
        #expect(response.settings == settings)
        #expect(response.warnings == symbols.map {
            "no price has been seen for \($0.rawValue) on this server; its rule cannot fire until a feed or PublishPrices prices it"
        })
    }
}
