/// An APNs device token: the phone's address for push notifications.
///
/// Apple hands an app its token as bytes; apps and providers pass it around as hex. Tokens have been 32 bytes
/// for years, but Apple says their length may change, so any even count of 64 to 200 hex digits (32 to 100
/// bytes) is accepted. The canonical form is lowercase, so one phone has one stored token whatever case the
/// app sent, and the `/3/device/<token>` path APNs is sent never differs between two sends to it.
public struct PushToken: Sendable, Hashable, CustomStringConvertible {
    /// Lowercase hex.
    public let rawValue: String

    public static let minDigits = 64
    public static let maxDigits = 200
    static let rule = "must be an even number of 64–200 hex digits"

    public init(validating text: String, field: String = "apns_token") throws(ValidationError) {
        let bytes = Array(text.utf8)
        guard bytes.count >= Self.minDigits, bytes.count <= Self.maxDigits else {
            throw ValidationError(field: field, rule: Self.rule + " (got \(text.count) characters)")
        }
        guard bytes.count % 2 == 0 else {
            throw ValidationError(field: field, rule: Self.rule + " (got an odd count, \(bytes.count))")
        }
        var lowered = [UInt8]()
        lowered.reserveCapacity(bytes.count)
        for byte in bytes {
            guard let digit = HexText.lowercaseDigit(byte) else {
                throw ValidationError(field: field, rule: Self.rule + " (found \(DeviceID.describe(byte)))")
            }
            lowered.append(digit)
        }
        rawValue = String(decoding: lowered, as: UTF8.self)
    }

    /// The first and last few digits, for logs: a token is an address, not a secret, but a log needs no more
    /// than this to tell two apart.
    public var abbreviated: String { Self.abbreviate(rawValue) }

    /// `abbreviated` for a token held as text.
    public static func abbreviate(_ token: String) -> String { "\(token.prefix(8))…\(token.suffix(4))" }

    public var description: String { rawValue }
}
