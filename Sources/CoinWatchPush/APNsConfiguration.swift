/// How the provider reaches APNs and authenticates to it.
///
/// Only the token-based scheme is supported: one ES256 key (`AuthKey_<key id>.p8`) signs the provider tokens of
/// every topic of a team, and never expires, where certificates have to be renewed yearly per app.
public struct APNsConfiguration: Sendable {
    /// Which APNs environment the server sends to. A token belongs to the environment that issued it: a token from
    /// a development build sent to production is refused as `BadDeviceToken`, so a registration names its
    /// environment and the server sends only to the devices of its own.
    public enum Environment: String, Sendable, Hashable, CustomStringConvertible {
        case production
        case sandbox

        public var description: String { rawValue }
    }

    public static let productionEndpoint = "https://api.push.apple.com"
    public static let sandboxEndpoint = "https://api.sandbox.push.apple.com"

    /// Apple answers `429 TooManyProviderTokenUpdates` to tokens replaced more often than every 20 minutes and
    /// `403 ExpiredProviderToken` to tokens older than an hour.
    public static let recommendedTokenRefresh: ClosedRange<Duration> = .seconds(20 * 60) ... .seconds(50 * 60)

    /// `scheme://host[:port]` with no path; requests go to `<endpoint>/3/device/<token>`.
    public var endpoint: String
    public var environment: Environment
    /// The apns-topic (the app's bundle id) for devices that registered without one.
    public var defaultTopic: String
    /// The key's id (`kid` of every provider token), 10 characters in Apple's developer account.
    public var keyID: String
    /// The team id (`iss` of every provider token).
    public var teamID: String
    /// Long-lived HTTP/2 connections kept to the endpoint; a second one opens only when the first has as many
    /// streams open as allowed.
    public var connections = 1
    /// Streams per connection at most. The server's SETTINGS_MAX_CONCURRENT_STREAMS lowers it (libcurl obeys it);
    /// APNs has been seen advertising 1,000 to 1,500.
    public var maxConcurrentStreams = 1000
    /// How long one provider token is used before the next is made (at the first send after that).
    public var tokenRefresh: Duration = .seconds(40 * 60)
    /// PEM file of CAs trusted in addition to the system's.
    public var caFile: String?
    /// A notification not answered within this is given up (and retried by the caller).
    public var requestTimeout: Duration = .seconds(30)
    public var connectTimeout: Duration = .seconds(10)
    /// After APNs refused a freshly made provider token, sending stops for this long before one more try.
    public var pauseAfterRejectedToken: Duration = .seconds(20 * 60)

    public init(endpoint: String, environment: Environment, defaultTopic: String, keyID: String, teamID: String) {
        self.endpoint = endpoint
        self.environment = environment
        self.defaultTopic = defaultTopic
        self.keyID = keyID
        self.teamID = teamID
    }

    /// How many notifications may be on their way at once: one per stream of every connection.
    public var capacity: Int { connections * maxConcurrentStreams }

    /// The endpoint of Apple's host for `environment`.
    public static func endpoint(for environment: Environment) -> String {
        environment == .production ? productionEndpoint : sandboxEndpoint
    }

    /// Checks every setting, naming the first one that is wrong.
    public func validate() throws(PushError) {
        func fail(_ message: String) -> PushError { PushError(code: .invalidConfiguration, message: message) }
        let lower = endpoint.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            throw fail("endpoint '\(endpoint)' must start with https:// (or http:// for a local HTTP/2 server)")
        }
        let rest = endpoint.drop { $0 != "/" }.dropFirst(2)
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("#"), !rest.contains(" ") else {
            throw fail("endpoint '\(endpoint)' must be scheme://host[:port] with no path")
        }
        guard Self.isTopic(defaultTopic) else {
            throw fail("topic '\(defaultTopic)' must be a bundle id: 1–255 characters of A-Z a-z 0-9 . -")
        }
        guard Self.isKeyIdentifier(keyID) else { throw fail("key id must be 1–64 characters of A-Z a-z 0-9") }
        guard Self.isKeyIdentifier(teamID) else { throw fail("team id must be 1–64 characters of A-Z a-z 0-9") }
        guard (1...64).contains(connections) else { throw fail("connections must be 1–64 (got \(connections))") }
        guard (1...10_000).contains(maxConcurrentStreams) else {
            throw fail("streams per connection must be 1–10000 (got \(maxConcurrentStreams))")
        }
        guard tokenRefresh >= .seconds(1), tokenRefresh <= Self.recommendedTokenRefresh.upperBound else {
            throw fail("token refresh must be at most 50m (APNs refuses tokens older than an hour)")
        }
        guard requestTimeout >= .milliseconds(100), connectTimeout >= .milliseconds(100) else {
            throw fail("timeouts must be at least 100ms")
        }
    }

    /// A bundle id as apns-topic takes it (suffixes such as `.voip` included).
    public static func isTopic(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...255).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }

    static func isKeyIdentifier(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                false
            }
        }
    }
}
