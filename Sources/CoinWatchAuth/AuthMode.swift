public import CoinWatchCore
/// Whether calls must carry credentials.
public enum AuthMode: String, Sendable, Hashable, CaseIterable {
    /// Every call is checked against `MethodPolicy`.
    case required
    /// No call is checked, except `PublishPrices` when a `--publish-token` is set (as before keys existed).
    case off

    /// The mode to run in: `requested` if given, else `off` when every listener is on a loopback address.
    ///
    /// - Throws: `AuthModeError` when no mode was requested and a listener may be reachable from other machines:
    ///   serving every device's settings to the network without authentication must be a choice, not a default
    ///   (Redis's protected mode draws the same line).
    public static func resolve(requested: AuthMode?, listenHosts: [String]) throws(AuthModeError) -> AuthMode {
        if let requested { return requested }
        let exposed = listenHosts.filter { !isLoopbackHost($0) }
        guard exposed.isEmpty else { throw AuthModeError(exposedHosts: exposed) }
        return .off
    }
}

/// A non-loopback listener with no `--auth` given.
public struct AuthModeError: CoinWatchError {
    /// The one kind: a listener is exposed and `--auth` was not chosen.
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// A non-loopback listener with no `--auth` given.
        public static let authNotChosen = Code("authNotChosen")
    }

    public let exposedHosts: [String]

    public var code: Code { .authNotChosen }
    public var description: String { message }

    /// What to do about it, naming the exposed addresses.
    public var message: String {
        let hosts = exposedHosts.map { HostAndPort(host: $0, port: 0).hostText }.joined(separator: ", ")
        return """
            refusing to start: listening on \(hosts) without --auth would let anyone who can reach this port read and \
            overwrite every device's settings (device ids are not secrets). Either
              - turn authorisation on: create a key with 'coinwatchd keys create --scope admin --data DIR', then start \
            with --auth required (devices get their own secrets; see docs/SECURITY.md), or
              - if only trusted machines can reach this address (a private network behind a firewall), say so with \
            --auth off, or
              - listen on a loopback address (127.0.0.1) only.
            """
    }
}
