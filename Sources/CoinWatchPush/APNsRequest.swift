/// One notification for one device, as `POST /3/device/<token>` sends it.
public struct APNsRequest: Sendable, Hashable {
    /// `apns-id`: a UUID (`8-4-4-4-12` hex). APNs echoes it and logs it, so the caller derives it from its own
    /// record of the notification and both sides' logs name the same id.
    public var apnsID: String
    /// The device token, lowercase hex.
    public var deviceToken: String
    /// `apns-topic`: the app's bundle id.
    public var topic: String
    /// The JSON body, at most 4,096 bytes.
    public var payload: [UInt8]
    /// `apns-collapse-id` (at most 64 bytes): the phone shows only the latest notification of one collapse id.
    public var collapseID: String?
    /// `apns-expiration`: seconds since the Unix epoch until which APNs stores and retries the notification
    /// for an offline phone; 0 = deliver now or never. The provider does not send it after this second either.
    public var expiration: Int64
    /// `apns-priority`: 10 = at once (visible alerts), 5 = when power allows.
    public var priority: Int
    /// `apns-push-type`.
    public var pushType: String
    /// The caller's reference, returned with the response untouched.
    public var tag: [UInt8]

    public init(
        apnsID: String, deviceToken: String, topic: String, payload: [UInt8], collapseID: String? = nil,
        expiration: Int64 = 0, priority: Int = 10, pushType: String = "alert", tag: [UInt8] = []
    ) {
        self.apnsID = apnsID
        self.deviceToken = deviceToken
        self.topic = topic
        self.payload = payload
        self.collapseID = collapseID
        self.expiration = expiration
        self.priority = priority
        self.pushType = pushType
        self.tag = tag
    }

    /// APNs' limit on the body of a (non-VoIP) notification.
    public static let maxPayloadBytes = 4096
    /// APNs' limit on `apns-collapse-id`.
    public static let maxCollapseIDBytes = 64

    /// The headers of the request, in the order they are sent, without `authorization` (added per token).
    var headers: [String] {
        var lines = [
            "apns-id: \(apnsID)",
            "apns-topic: \(topic)",
            "apns-push-type: \(pushType)",
            "apns-priority: \(priority)",
            "apns-expiration: \(expiration)",
        ]
        if let collapseID { lines.append("apns-collapse-id: \(collapseID)") }
        lines.append("content-type: application/json")
        return lines
    }
}

/// What became of one `APNsRequest`.
public struct APNsResponse: Sendable, Hashable {
    public var request: APNsRequest
    /// The HTTP status; 0 when no answer came (a timeout, a dropped connection) or it was not sent.
    public var status: Int
    /// APNs' reason (`BadDeviceToken`, `Unregistered`, ...) from the body of a refusal; empty otherwise.
    public var reason: String
    /// Why no answer came (libcurl's message); empty when one did.
    public var failure: String
    public var outcome: APNsOutcome

    public init(request: APNsRequest, status: Int, reason: String, failure: String, outcome: APNsOutcome) {
        self.request = request
        self.status = status
        self.reason = reason
        self.failure = failure
        self.outcome = outcome
    }
}

/// What the caller does with a notification after its response.
public enum APNsOutcome: Sendable, Hashable {
    /// APNs accepted it (200).
    case delivered
    /// APNs will never deliver to this token (410 Unregistered, 400 BadDeviceToken, 400 DeviceTokenNotForTopic):
    /// stop sending to it until the device registers again.
    case tokenRejected
    /// APNs refused this notification for good (another 4xx: a malformed header, a payload too large); sending it
    /// again would be refused again.
    case rejected
    /// It may succeed later (429, 5xx, a timeout, a dropped connection): try again after a pause.
    case retry
    /// Not sent: its expiration passed while it waited.
    case expired
}
