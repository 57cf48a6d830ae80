import CoinWatchProto

/// Decides, before any handler runs, whether a call may proceed.
///
/// One authorizer serves every transport: the dispatcher asks it for every call, native, gRPC or HTTP, with
/// the method path, the call's context (metadata, `authorization` credentials, transport, peer) and the request
/// bytes, so a rule about a device can read the request's device id (`CallAuthorizationRequest.stringField`).
/// It runs on the event loop that owns the call: it must answer from memory and never block. Without an
/// authorizer every call is allowed.
public protocol CallAuthorizer: Sendable {
    /// Returns to allow the call; throws the error the caller gets (UNAUTHENTICATED for missing or bad
    /// credentials, PERMISSION_DENIED for valid ones without the right) to refuse it.
    func authorize(_ request: CallAuthorizationRequest) throws(RPCError)
}

/// What an authorizer knows about a call. Valid only during `authorize`: `payload` points into a buffer the
/// transport reuses.
public struct CallAuthorizationRequest {
    /// The method path, `coinwatch.v1.CoinWatch/GetSettings`.
    public let method: String
    public let context: ServerContext
    /// The request message's encoded bytes (for a stream that takes several requests, the first).
    public let payload: UnsafeRawBufferPointer

    public init(method: String, context: ServerContext, payload: UnsafeRawBufferPointer) {
        self.method = method
        self.context = context
        self.payload = payload
    }

    /// The string at `path` of field numbers in the request (`[1]` is a top-level field 1, `[1, 1]` field 1
    /// of the message in field 1), the last occurrence winning as protobuf merging does; nil when absent, not
    /// length-delimited, or not UTF-8. Every CoinWatch request about a device carries its id as field 1.
    public func stringField(_ path: [Int]) -> String? {
        var bytes = payload
        for (depth, number) in path.enumerated() {
            guard let found = Self.lastDelimited(number, in: bytes) else { return nil }
            if depth == path.count - 1 {
                return String(validating: found, as: UTF8.self)
            }
            bytes = found
        }
        return nil
    }

    private static func lastDelimited(_ number: Int, in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var cursor = ProtobufCursor(bytes)
        var found: UnsafeRawBufferPointer?
        while !cursor.isAtEnd {
            guard let (field, wireType) = cursor.tag() else { return nil }
            if wireType == 2 {
                guard let value = cursor.delimited() else { return nil }
                if field == number { found = value }
            } else {
                let skipped: Bool = switch wireType {
                case 0: cursor.varint() != nil
                case 1: cursor.bytes(8) != nil
                case 5: cursor.bytes(4) != nil
                default: false
                }
                guard skipped else { return nil }
            }
        }
        return found
    }
}
