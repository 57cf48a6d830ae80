/// A failed system call (or an I/O condition expressed as one), with the `errno` captured at the call.
///
/// The error keeps the raw `errno` so callers can branch on it (`ECONNRESET` vs `ETIMEDOUT`) and the
/// name of the failing function so logs say where it happened. `detail` adds context the code alone
/// cannot give, such as the address being connected to or a resolver message.
public struct IOError: Error, Hashable, Sendable, CustomStringConvertible {
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
    /// The peer reset the connection.
    public var isConnectionReset: Bool { errno == Sys.ECONNRESET_ }
    /// The event loop the operation needed has stopped.
    public var isShutdown: Bool { errno == Sys.ESHUTDOWN_ }
    /// An operation did not finish within its time limit.
    public var isTimeout: Bool { errno == Sys.ETIMEDOUT_ }

    static func shutdown(_ function: String) -> IOError {
        IOError(errno: Sys.ESHUTDOWN_, function: function, detail: "event loop stopped")
    }
}
