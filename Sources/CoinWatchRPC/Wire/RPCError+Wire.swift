import CoinWatchProto

/// The single mapping between `RPCError` and the wire's `Status`.
extension RPCError.Code {
    init(_ wire: V1.Status.Code) {
        self.init(rawValue: wire.rawValue)
    }

    var wire: V1.Status.Code { V1.Status.Code(rawValue: rawValue) }
}

extension RPCError {
    /// The error an `End` or `ConnectionError` status describes; `nil` for OK.
    init?(status: V1.Status?) {
        guard let status, status.code != .ok else { return nil }
        self.init(code: Code(status.code), message: status.message)
    }

    var wireStatus: V1.Status { V1.Status(code: code.wire, message: message) }
}
