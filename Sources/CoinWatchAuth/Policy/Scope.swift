/// What a service key may do. Each method needs one scope (see `MethodPolicy`); a key holds any set of them.
public enum Scope: String, CaseIterable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Read any device's settings.
    case settingsRead = "settings:read"
    /// Save and delete any device's settings.
    case settingsWrite = "settings:write"
    /// Read prices (`GetPrices`, `StreamPrices`).
    case pricesRead = "prices:read"
    /// Publish prices (`PublishPrices`).
    case pricesPublish = "prices:publish"
    /// Follow any device's alerts (`StreamAlerts`).
    case alertsRead = "alerts:read"
    /// Register, read and unregister any device.
    case devicesWrite = "devices:write"
    /// The `Admin` service: keys and device secrets. A key with it can make itself any other scope.
    case admin

    public var description: String { rawValue }

    /// Parses one scope name.
    public init(name: String) throws(AuthError) {
        guard let scope = Scope(rawValue: name) else {
            throw AuthError(
                code: .invalidArgument,
                message: "unknown scope '\(name)'; the scopes are \(Scope.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self = scope
    }

    public static func < (lhs: Scope, rhs: Scope) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }

    var bit: UInt8 { UInt8(1) << UInt8(Scope.allCases.firstIndex(of: self)!) }
}

/// A set of scopes, one bit each, so a check on the call path is a mask test.
public struct ScopeSet: Sendable, Hashable, CustomStringConvertible {
    public private(set) var bits: UInt8

    public init(_ scopes: some Sequence<Scope>) {
        bits = 0
        for scope in scopes { bits |= scope.bit }
    }

    /// Parses scope names, each of which may itself be a comma-separated list (`--scope a,b --scope c`).
    public init(names: [String]) throws(AuthError) {
        var scopes: [Scope] = []
        for name in names {
            for part in name.split(separator: ",", omittingEmptySubsequences: true) {
                scopes.append(try Scope(name: part.trimmingSpaces))
            }
        }
        guard !scopes.isEmpty else {
            throw AuthError(code: .invalidArgument, message: "a key needs at least one scope")
        }
        self.init(scopes)
    }

    public func contains(_ scope: Scope) -> Bool { bits & scope.bit != 0 }

    public var isEmpty: Bool { bits == 0 }

    public var scopes: [Scope] { Scope.allCases.filter(contains) }

    public var names: [String] { scopes.map(\.rawValue) }

    public var description: String { names.joined(separator: ",") }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
