import Testing
@testable import CoinWatchPush

/// What each APNs answer means to the caller.
struct APNsOutcomeTests {
    @Test(arguments: [
        (200, "", APNsOutcome.delivered),
        (410, "Unregistered", .tokenRejected),
        (410, "ExpiredToken", .tokenRejected),
        (400, "BadDeviceToken", .tokenRejected),
        (400, "DeviceTokenNotForTopic", .tokenRejected),
        (400, "BadCollapseId", .rejected),
        (400, "TopicDisallowed", .rejected),
        (404, "BadPath", .rejected),
        (405, "MethodNotAllowed", .rejected),
        (413, "PayloadTooLarge", .rejected),
        (429, "TooManyRequests", .retry),
        (429, "TooManyProviderTokenUpdates", .retry),
        (500, "InternalServerError", .retry),
        (503, "ServiceUnavailable", .retry),
        (503, "Shutdown", .retry),
    ])
    func outcome(status: Int, reason: String, expected: APNsOutcome) {
        #expect(APNsOutcome.of(status: status, reason: reason) == expected)
    }

    @Test func theReasonIsReadFromTheJSONBody() {
        #expect(APNsResponse.reason(fromBody: Array(#"{"reason":"BadDeviceToken"}"#.utf8)) == "BadDeviceToken")
        #expect(APNsResponse.reason(fromBody: Array(#"{"reason":"Unregistered","timestamp":1700000000000}"#.utf8))
            == "Unregistered")
        #expect(APNsResponse.reason(fromBody: []) == "")
        #expect(APNsResponse.reason(fromBody: Array("not json".utf8)) == "")
        #expect(APNsResponse.reason(fromBody: Array(#"{"reason":42}"#.utf8)) == "")
    }

    @Test func theHeadersAreTheOnesAPNsDocuments() {
        let request = APNsRequest(
            apnsID: "3f2504e0-4f89-11d3-9a0c-0305e82c3301", deviceToken: String(repeating: "a", count: 64),
            topic: "com.example.app", payload: Array("{}".utf8), collapseID: "phone:BTC", expiration: 1_800_000_000)
        #expect(request.headers == [
            "apns-id: 3f2504e0-4f89-11d3-9a0c-0305e82c3301", "apns-topic: com.example.app", "apns-push-type: alert",
            "apns-priority: 10", "apns-expiration: 1800000000", "apns-collapse-id: phone:BTC",
            "content-type: application/json",
        ])
    }
}
