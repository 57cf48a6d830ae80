public import CoinWatchCore

/// A failed system call (or an I/O condition expressed as one), with the `errno` captured at the call.
///
/// The error keeps the raw `errno` so callers can branch on it (`ECONNRESET` vs `ETIMEDOUT`) and the
/// name of the failing function so logs say where it happened. `detail` adds context the code alone
/// cannot give, such as the address being connected to or a resolver message.
public struct IOError: CoinWatchError {
    /// The `errno` value; 0 when the failure does not come from `errno` (e.g. name resolution).
    public var errno: Int32
    /// The system call or operation that failed, e.g. `"connect"`.
    public var function: String
    /// Extra context, e.g. `"127.0.0.1:7000"` or a resolver message.
    public var detail: String?

    public init(errno: Int32, function: String, detail: String? = nil) {
        self.errno = errno
        self.function = function
        self.detail = detail
    }

    public var description: String {
        var text = "\(function) failed"
        if errno != 0 {
            text += ": \(Sys.errorMessage(errno)) (errno \(errno))"
        }
        if let detail {
            text += errno != 0 ? " [\(detail)]" : ": \(detail)"
        }
        return text
    }
}

extension IOError {
    /// The kinds of failure callers branch on, read from `errno`; any other errno is `.system` (the errno itself
    /// says which).
    public struct Code: ErrorCode {
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The peer reset the connection (`ECONNRESET`).
        public static let connectionReset = Code("connectionReset")
        /// The event loop the operation needed has stopped (`ESHUTDOWN`).
        public static let shutdown = Code("shutdown")
        /// An operation did not finish within its time limit (`ETIMEDOUT`).
        public static let timeout = Code("timeout")
        /// A name did not resolve to an address (no `errno`: the resolver's own message is in `detail`).
        public static let unresolved = Code("unresolved")
        /// Any other failed call; `errno` says why.
        public static let system = Code("system")
    }

    /// The kind of failure, from `errno`.
    public var code: Code {
        switch errno {
        case Sys.ECONNRESET_: .connectionReset
        case Sys.ESHUTDOWN_: .shutdown
        case Sys.ETIMEDOUT_: .timeout
        case 0: .unresolved
        default: .system
        }
    }

    /// The same sentence as `description`: the call, the errno's text and the detail.
    public var message: String { description }

    /// The peer reset the connection.
    public var isConnectionReset: Bool { code == .connectionReset }
    /// The event loop the operation needed has stopped.
    public var isShutdown: Bool { code == .shutdown }
    /// An operation did not finish within its time limit.
    public var isTimeout: Bool { code == .timeout }

    static func shutdown(_ function: String) -> IOError {
        IOError(errno: Sys.ESHUTDOWN_, function: function, detail: "event loop stopped")
    }
}
