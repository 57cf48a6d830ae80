public import CoinWatchModel
public import CoinWatchRPC

/// The device a request is about, read from its bytes (`CallAuthorizationRequest.stringField`, the last occurrence
/// of the field, as a decoder keeps it) before any handler decodes the request.
public enum RequestDevice {
    /// Whether the request's device is `device`: equal text at once, else compared in canonical form (a UUID in
    /// another case or with `_` separators is the same device).
    ///
    /// - Throws: INVALID_ARGUMENT when the request names no valid device id, with the message the handler would give.
    public static func matches(_ request: CallAuthorizationRequest, field: Int, device: DeviceID) throws(RPCError) -> Bool {
        let text = request.stringField([field]) ?? ""
        if text == device.rawValue { return true }
        return try self.device(text) == device
    }

    /// The request's device.
    public static func device(_ request: CallAuthorizationRequest, field: Int) throws(RPCError) -> DeviceID {
        try device(request.stringField([field]) ?? "")
    }

    private static func device(_ text: String) throws(RPCError) -> DeviceID {
        do {
            return try DeviceID(validating: text, field: "device_id")
        } catch {
            throw RPCError(code: .invalidArgument, message: error.description)
        }
    }
}
