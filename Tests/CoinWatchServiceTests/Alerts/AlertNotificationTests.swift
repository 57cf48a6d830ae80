import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchProto
import Foundation
import Testing
@testable import CoinWatchService

/// The APNs shape of an alert: payload size and text, collapse id, push interest.
struct AlertNotificationTests {
    static func fired(
        device: String, symbol: String = "BTC", direction: AlertDirection = .above, threshold: String = "5000",
        price: String = "5012.3"
    ) throws -> FiredAlert {
        FiredAlert(
            device: try DeviceID(validating: device), symbol: try Symbol(validating: symbol), direction: direction,
            threshold: try #require(ExactDecimal(threshold)), price: try #require(ExactDecimal(price)), generation: 7)
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// 128 characters, the longest device id, ending in `last`.
    static func longestDevice(endingIn last: Character) -> String {
        String(repeating: "device.", count: 18) + "a" + String(last)
    }

    @Test func aLongDeviceIDGetsAStableCollapseIDWithinAPNsLimit() throws {
        let device = try DeviceID(validating: Self.longestDevice(endingIn: "1"))
        let sibling = try DeviceID(validating: Self.longestDevice(endingIn: "2"))
        #expect(device.rawValue.utf8.count == DeviceID.maxLength)
        let symbol = try Symbol(validating: "BTC")

        let id = AlertNotification.collapseID(device: device, symbol: symbol)
        #expect(id.utf8.count <= 64)
        #expect(id == AlertNotification.collapseID(device: device, symbol: symbol))
        #expect(id.hasPrefix("device.device."))
        // Ids that differ only past the kept prefix still collapse separately, as do symbols.
        #expect(id != AlertNotification.collapseID(device: sibling, symbol: symbol))
        #expect(id != AlertNotification.collapseID(device: device, symbol: try Symbol(validating: "ETH")))
        // Short ids are kept readable as they are.
        #expect(AlertNotification.collapseID(device: try DeviceID(validating: "phone-1"), symbol: symbol) == "phone-1:BTC")
    }

    @Test func thePayloadFitsWithTheLongestIDsAndDecimals() throws {
        let longest = ExactDecimal(mantissa: .max, scale: 0)!
        let finest = ExactDecimal(mantissa: .max, scale: ExactDecimal.maxScale)!
        for (threshold, price) in [(longest, finest), (finest, longest)] {
            let fired = FiredAlert(
                device: try DeviceID(validating: Self.longestDevice(endingIn: "9")),
                symbol: try Symbol(validating: "ABCDEFGHIJ"), direction: .below, threshold: threshold, price: price,
                generation: .max)
            let alert = AlertNotification.make(fired, id: UUID().uuidString.lowercased(), timeMs: 1_700_000_000_000)
            #expect(alert.apnsPayloadJSON.utf8.count <= AlertNotification.maxPayloadBytes)
            #expect(alert.apnsCollapseID.utf8.count <= AlertNotification.maxCollapseIDBytes)
            // The full form, with CoinWatch's own keys, not the aps-only fallback.
            let payload = try Self.json(alert.apnsPayloadJSON)
            #expect(payload["device"] as? String == fired.device.rawValue)
            #expect(payload["threshold"] as? String == threshold.description)
            #expect(payload["price"] as? String == price.description)
            #expect(payload["direction"] as? String == "below")
            #expect(alert.idempotencyKey == fired.idempotencyKey)
        }
    }

    @Test func aFallAlertSaysFellBelow() throws {
        let fired = try Self.fired(
            device: "phone-1", symbol: "ETH", direction: .below, threshold: "3000.5", price: "2999.99")
        #expect(AlertNotification.body(fired) == "ETH fell below 3000.5 — now 2999.99")
        let alert = AlertNotification.make(fired, id: "alert-1", timeMs: 5)
        #expect(alert.direction == .below)
        let aps = try #require(try Self.json(alert.apnsPayloadJSON)["aps"] as? [String: Any])
        let apsAlert = try #require(aps["alert"] as? [String: Any])
        #expect(apsAlert["title"] as? String == "ETH below 3000.5")
        #expect(apsAlert["body"] as? String == "ETH fell below 3000.5 — now 2999.99")
        #expect(aps["thread-id"] as? String == "ETH")
    }

    @Test func aRiseAlertSaysRoseAbove() throws {
        let fired = try Self.fired(device: "phone-1")
        #expect(AlertNotification.body(fired) == "BTC rose above 5000 — now 5012.3")
    }

    @Test(arguments: [
        ("3F2504E0-4F89-11D3-9A0C-0305E82C3301", "3f2504e0_4f89_11d3_9a0c_0305e82c3301_eth_changed"),
        ("3f2504e0_4f89_11d3_9a0c_0305e82c3301", "3f2504e0_4f89_11d3_9a0c_0305e82c3301_eth_changed"),
        ("tablet:1", "tablet_1_eth_changed"),
        ("Phone-A.b", "Phone-A.b_eth_changed"),
    ])
    func thePushInterestIsTheOriginAppsName(device: String, interest: String) throws {
        let name = AlertNotification.pushInterest(
            device: try DeviceID(validating: device), symbol: try Symbol(validating: "eth"))
        #expect(name == interest)
    }
}
