public import CoinWatchRPC

/// The Connect protocol's names and HTTP statuses of the status codes (connectrpc.com protocol specification,
/// "Error Codes", with the HTTP mapping as amended by its RFC 003: 499, 504, 400 and 501 where it once had 408,
/// 408, 412 and 404).
extension RPCError.Code {
    private static let connectNames = [
        "ok", "canceled", "unknown", "invalid_argument", "deadline_exceeded", "not_found", "already_exists",
        "permission_denied", "resource_exhausted", "failed_precondition", "aborted", "out_of_range", "unimplemented",
        "internal", "unavailable", "data_loss", "unauthenticated",
    ]

    private static let connectStatuses = [
        200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401,
    ]

    /// Connect's name of the code (`canceled`, `invalid_argument`, …); `unknown` for a number outside the list,
    /// since Connect has no user-defined codes.
    public var connectName: String {
        Self.connectNames.indices.contains(Int(rawValue)) ? Self.connectNames[Int(rawValue)] : "unknown"
    }

    /// The HTTP status of a unary error response with this code; 500 for a number outside the list.
    public var connectHTTPStatus: Int {
        Self.connectStatuses.indices.contains(Int(rawValue)) ? Self.connectStatuses[Int(rawValue)] : 500
    }

    /// The code Connect names `name`; nil for a name it does not have.
    public init?(connectName name: String) {
        guard let index = Self.connectNames.firstIndex(of: name), index > 0 else { return nil }
        self.init(rawValue: Int32(index))
    }
}
