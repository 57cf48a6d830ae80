import Foundation

extension APNsOutcome {
    /// The reasons that mean the token itself is dead. `BadDeviceToken` is usually a token of the other
    /// environment (a development build's token sent to production); either way resending cannot succeed.
    static let tokenReasons: Set<String> = ["Unregistered", "BadDeviceToken", "DeviceTokenNotForTopic"]

    /// Classifies an answer. 403 (provider-token refusals) never reaches here: the client handles those itself.
    static func of(status: Int, reason: String) -> APNsOutcome {
        switch status {
        case 200:
            return .delivered
        case 410:
            return .tokenRejected
        case 400 where tokenReasons.contains(reason):
            return .tokenRejected
        case 429, 500...599:
            return .retry
        case 400...499:
            return .rejected
        default:
            // 1xx/3xx or something APNs does not send: not a verdict on the notification; try again later.
            return .retry
        }
    }
}

extension APNsResponse {
    /// APNs' `reason` from a refusal's JSON body (`{"reason":"BadDeviceToken"}`); empty when there is none.
    static func reason(fromBody body: [UInt8]) -> String {
        guard !body.isEmpty,
              let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let reason = object["reason"] as? String else { return "" }
        // Reasons are short identifiers; anything else is not worth carrying into logs and records.
        return String(reason.prefix(64))
    }
}
