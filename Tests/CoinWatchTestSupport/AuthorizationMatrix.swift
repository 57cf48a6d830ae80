/// The access table of `docs/SECURITY.md`, as the tests of the authoriser (in process and end to end) check it:
/// every method against every kind of caller.
public enum AuthorizationMatrix {
    /// What a call may carry.
    public enum Caller: String, CaseIterable, Sendable {
        case none = "no credential"
        case wrongKey = "a key the server does not know"
        case keyWithoutScope = "a key without the method's scope"
        case rightKey = "a key with the method's scope"
        case otherDevice = "another device's secret"
        case rightDevice = "the device's own secret"
    }

    /// How the authoriser answers.
    public enum Outcome: Sendable, Equatable {
        /// The call goes to its handler (which answers whatever it answers).
        case allowed
        case unauthenticated
        case permissionDenied
    }

    /// What a method needs: a scope (nil: open to everyone), and whether it is about one device (whose own secret
    /// is then enough).
    public struct Rule: Sendable {
        public let scope: String?
        public let isDeviceMethod: Bool
    }

    /// Every method the server may serve (device registration included), by path.
    public static let rules: [String: Rule] = [
        "coinwatch.v1.CoinWatch/GetSettings": Rule(scope: "settings:read", isDeviceMethod: true),
        "coinwatch.v1.CoinWatch/SaveSettings": Rule(scope: "settings:write", isDeviceMethod: true),
        "coinwatch.v1.CoinWatch/DeleteSettings": Rule(scope: "settings:write", isDeviceMethod: true),
        "coinwatch.v1.CoinWatch/StreamAlerts": Rule(scope: "alerts:read", isDeviceMethod: true),
        "coinwatch.v1.CoinWatch/RegisterDevice": Rule(scope: "devices:write", isDeviceMethod: true),
        "coinwatch.v1.CoinWatch/UnregisterDevice": Rule(scope: "devices:write", isDeviceMethod: true),
        "coinwatch.v1.CoinWatch/GetDevice": Rule(scope: "devices:write", isDeviceMethod: true),
        "coinwatch.v1.CoinWatch/GetPrices": Rule(scope: "prices:read", isDeviceMethod: false),
        "coinwatch.v1.CoinWatch/StreamPrices": Rule(scope: "prices:read", isDeviceMethod: false),
        "coinwatch.v1.CoinWatch/PublishPrices": Rule(scope: "prices:publish", isDeviceMethod: false),
        "coinwatch.v1.Health/Check": Rule(scope: nil, isDeviceMethod: false),
        "grpc.health.v1.Health/Check": Rule(scope: nil, isDeviceMethod: false),
        "grpc.health.v1.Health/Watch": Rule(scope: nil, isDeviceMethod: false),
        "grpc.reflection.v1.ServerReflection/ServerReflectionInfo": Rule(scope: nil, isDeviceMethod: false),
        "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": Rule(scope: nil, isDeviceMethod: false),
        "coinwatch.v1.Admin/CreateKey": Rule(scope: "admin", isDeviceMethod: false),
        "coinwatch.v1.Admin/ListKeys": Rule(scope: "admin", isDeviceMethod: false),
        "coinwatch.v1.Admin/RevokeKey": Rule(scope: "admin", isDeviceMethod: false),
        "coinwatch.v1.Admin/ResetDevice": Rule(scope: "admin", isDeviceMethod: false),
    ]

    public static let allScopes = [
        "settings:read", "settings:write", "prices:read", "prices:publish", "alerts:read", "devices:write", "admin",
    ]

    /// The documented answer for `caller` (the device's own secret and another device's are about the device in
    /// the request).
    public static func expected(_ caller: Caller, _ rule: Rule) -> Outcome {
        switch caller {
        case .wrongKey: return .unauthenticated
        case _ where rule.scope == nil: return .allowed
        case .none: return .unauthenticated
        case .keyWithoutScope, .otherDevice: return .permissionDenied
        case .rightKey: return .allowed
        case .rightDevice: return rule.isDeviceMethod ? .allowed : .permissionDenied
        }
    }

    /// The scopes of a key that may not call a method with `rule`: all the others.
    public static func scopesWithout(_ rule: Rule) -> [String] {
        allScopes.filter { $0 != (rule.scope ?? "admin") }
    }

    /// A token in the form of a service key that no server issued.
    public static let unknownKey = "cwk_0123456789abcdef_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
}
