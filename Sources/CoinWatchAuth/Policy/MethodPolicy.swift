import CoinWatchProto

/// Who may call each method: the one table every transport's calls are checked against.
///
/// Every method the server serves must have a rule; a method without one is refused to everyone when
/// authorisation is on (`docs/SECURITY.md` lists the table).
public struct MethodPolicy: Sendable {
    public enum Rule: Sendable, Hashable {
        /// Anyone, with or without a credential: the health check load balancers make.
        case open
        /// A key with this scope; also anonymous callers when `anonymous` is true (`--public-prices`).
        case scope(Scope, anonymous: Bool)
        /// A call about one device, named by the string field `deviceField` of the request: the device's own
        /// secret, or a key with the scope. With `claims`, an anonymous caller may make it about a device that has
        /// no secret yet, and is issued the device's secret by it (trust on first use).
        case device(Scope, deviceField: Int, claims: Bool)
    }

    public let rules: [String: Rule]

    public init(rules: [String: Rule]) {
        self.rules = rules
    }

    public func rule(for method: String) -> Rule? { rules[method] }

    /// Push's device registration methods, named here before their generated declarations exist in every build.
    public static let registerDevicePath = "coinwatch.v1.CoinWatch/RegisterDevice"
    public static let unregisterDevicePath = "coinwatch.v1.CoinWatch/UnregisterDevice"
    public static let getDevicePath = "coinwatch.v1.CoinWatch/GetDevice"

    /// CoinWatch's rules.
    ///
    /// - Parameter publicPrices: whether price reads are open to anonymous callers.
    public static func coinWatch(publicPrices: Bool) -> MethodPolicy {
        var rules: [String: Rule] = [
            V1.CoinWatch.getSettings.path: .device(.settingsRead, deviceField: 1, claims: false),
            V1.CoinWatch.saveSettings.path: .device(.settingsWrite, deviceField: 1, claims: true),
            V1.CoinWatch.deleteSettings.path: .device(.settingsWrite, deviceField: 1, claims: false),
            V1.CoinWatch.streamAlerts.path: .device(.alertsRead, deviceField: 1, claims: false),
            V1.CoinWatch.getPrices.path: .scope(.pricesRead, anonymous: publicPrices),
            V1.CoinWatch.streamPrices.path: .scope(.pricesRead, anonymous: publicPrices),
            V1.CoinWatch.publishPrices.path: .scope(.pricesPublish, anonymous: false),
            V1.Health.check.path: .open,
            // gRPC's standard services, served beside CoinWatch's on the same port: health as open as ours, and
            // reflection, which describes the public schema only (grpcurl's `list` and `describe`).
            "grpc.health.v1.Health/Check": .open,
            "grpc.health.v1.Health/Watch": .open,
            "grpc.reflection.v1.ServerReflection/ServerReflectionInfo": .open,
            "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": .open,
            registerDevicePath: .device(.devicesWrite, deviceField: 1, claims: true),
            unregisterDevicePath: .device(.devicesWrite, deviceField: 1, claims: false),
            getDevicePath: .device(.devicesWrite, deviceField: 1, claims: false),
        ]
        for path in V1.Admin.methodPaths {
            rules[path] = .scope(.admin, anonymous: false)
        }
        return MethodPolicy(rules: rules)
    }
}
