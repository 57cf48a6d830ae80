import CoinWatchAlertEngine
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto

/// Turns a fired alert into what leaves the server: the `Alert` message with its
/// APNs payload, collapse id and push-interest name, ready for a push gateway to
/// forward unchanged.
enum AlertNotification {
    /// APNs refuses payloads over 4096 bytes.
    static let maxPayloadBytes = 4096
    /// APNs refuses `apns-collapse-id` values over 64 bytes.
    static let maxCollapseIDBytes = 64

    static func make(_ fired: FiredAlert, id: String, timeMs: Int64) -> V1.Alert {
        V1.Alert(
            id: id, deviceID: fired.device.rawValue, symbol: fired.symbol.rawValue,
            direction: fired.direction == .above ? .above : .below,
            threshold: V1.Decimal(fired.threshold), price: V1.Decimal(fired.price), timeMs: timeMs,
            idempotencyKey: fired.idempotencyKey,
            apnsPayloadJSON: apnsPayload(fired, id: id),
            apnsCollapseID: collapseID(device: fired.device, symbol: fired.symbol),
            pushInterest: pushInterest(device: fired.device, symbol: fired.symbol))
    }

    /// "BTC rose above 5000 — now 5012.3"
    static func body(_ fired: FiredAlert) -> String {
        let verb = fired.direction == .above ? "rose above" : "fell below"
        return "\(fired.symbol) \(verb) \(fired.threshold) — now \(fired.price)"
    }

    /// The APNs JSON: `aps` with a title/body alert, sound, thread id (the symbol)
    /// and category, plus CoinWatch's own keys beside it. Decimals are strings so
    /// no JSON reader turns them into floats.
    static func apnsPayload(_ fired: FiredAlert, id: String) -> String {
        let title = "\(fired.symbol) \(fired.direction == .above ? "above" : "below") \(fired.threshold)"
        let aps = "{\"alert\":{\"title\":\(JSONText.quote(title)),\"body\":\(JSONText.quote(body(fired)))},"
            + "\"sound\":\"default\",\"thread-id\":\(JSONText.quote(fired.symbol.rawValue)),\"category\":\"PRICE_ALERT\"}"
        let full = "{\"aps\":\(aps),\"alert_id\":\(JSONText.quote(id)),\"device\":\(JSONText.quote(fired.device.rawValue)),"
            + "\"symbol\":\(JSONText.quote(fired.symbol.rawValue)),\"direction\":\"\(fired.direction)\","
            + "\"threshold\":\"\(fired.threshold)\",\"price\":\"\(fired.price)\"}"
        // Ids and decimals are bounded, so this always fits; keep the guarantee explicit.
        return full.utf8.count <= maxPayloadBytes ? full : "{\"aps\":\(aps)}"
    }

    /// One collapse id per (device, symbol), so an offline phone shows only the latest.
    /// Ids too long for APNs' 64 bytes keep a readable prefix and a hash of the rest.
    static func collapseID(device: DeviceID, symbol: Symbol) -> String {
        let plain = "\(device.rawValue):\(symbol.rawValue)"
        guard plain.utf8.count > maxCollapseIDBytes else { return plain }
        let hash = String(fnv1a(plain), radix: 16)
        return String(plain.prefix(maxCollapseIDBytes - hash.count - 1)) + "~" + hash
    }

    /// The origin app's interest name, `<device>_<symbol lowercased>_changed`. The app
    /// subscribed with its UUID lowercased and `_`-separated, so UUIDs take that form;
    /// `:` (not allowed in interest names) becomes `_`.
    static func pushInterest(device: DeviceID, symbol: Symbol) -> String {
        let name = device.isUUID ? device.rawValue.replacingDashes() : device.rawValue
        return "\(name.replacingColons())_\(symbol.rawValue.lowercased())_changed"
    }

    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}

extension String {
    fileprivate func replacingDashes() -> String { String(map { $0 == "-" ? "_" : $0 }) }
    fileprivate func replacingColons() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}
