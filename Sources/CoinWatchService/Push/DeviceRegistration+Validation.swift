import CoinWatchModel
import CoinWatchProto
import CoinWatchPush

extension V1.RegisterDeviceRequest {
    /// The request's fields checked and in canonical form, or the first rule broken.
    func validated() throws(ValidationError) -> (device: DeviceID, token: PushToken, environment: V1.PushEnvironment) {
        let device = try DeviceID(validating: deviceID, field: "device_id")
        let token = try PushToken(validating: apnsToken, field: "apns_token")
        let environment: V1.PushEnvironment
        switch self.environment {
        case .unspecified, .production: environment = .production
        case .sandbox: environment = .sandbox
        default: throw ValidationError(field: "environment", rule: "must be SANDBOX or PRODUCTION (got \(self.environment.rawValue))")
        }
        if !topic.isEmpty && !APNsConfiguration.isTopic(topic) {
            throw ValidationError(field: "topic", rule: "must be a bundle id: 1–255 characters of A-Z a-z 0-9 . -")
        }
        if !Self.isLocale(locale) {
            throw ValidationError(field: "locale", rule: "must be at most 35 characters of A-Z a-z 0-9 - _")
        }
        return (device, token, environment)
    }

    /// A BCP 47 tag or a POSIX-style locale name (`en-GB`, `en_GB`); empty is allowed.
    static func isLocale(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count <= 35 else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default:
                false
            }
        }
    }
}

extension V1.PushEnvironment {
    /// The provider's environment this registration's tokens belong to.
    var apns: APNsConfiguration.Environment { self == .sandbox ? .sandbox : .production }
}
