public import CoinWatchProto
public import CoinWatchRPC

/// A routed Connect call: its method, codec and deadline, and the conversions between what the client sends
/// and receives and the binary messages the dispatcher handles.
public struct ConnectCallPlan: Sendable {
    /// The method, with its JSON transcoding.
    public let method: JSONMethodCodec
    /// The request's content type; responses use the same.
    public let contentType: ConnectContentType
    /// The deadline from `Connect-Timeout-Ms`, in nanoseconds; 0 = none.
    public let timeoutNanos: Int64
    /// The request message of a GET (from the query); nil for a POST, whose body holds it.
    public let getMessage: [UInt8]?

    /// Unknown JSON fields are skipped in requests, as unknown binary fields are, so that a newer client's
    /// additions do not break an older server.
    static let requestJSONOptions = JSONDecodingOptions(ignoreUnknownFields: true)

    /// The binary request for the dispatcher, from the request body (or the GET query): the envelope of a
    /// streaming call unwrapped, JSON transcoded. Throws `invalid_argument` for a malformed body (the JSON error
    /// names the field), `resource_exhausted` past `maxMessageBytes`.
    public func binaryRequest(body: UnsafeRawBufferPointer, maxMessageBytes: Int) throws(ConnectFailure) -> [UInt8] {
        if let getMessage {
            let result = getMessage.withUnsafeBytes { query in
                Result { () throws(ConnectFailure) in try transcode(query, maxMessageBytes: maxMessageBytes) }
            }
            return try result.get()
        }
        if contentType.isStreaming {
            let message = try ConnectEnvelope.singleMessage(of: body, maxMessageBytes: maxMessageBytes)
            return try transcode(message, maxMessageBytes: maxMessageBytes)
        }
        guard body.count <= maxMessageBytes else {
            throw ConnectFailure(.resourceExhausted, "request message of \(body.count) bytes exceeds the limit of \(maxMessageBytes)")
        }
        return try transcode(body, maxMessageBytes: maxMessageBytes)
    }

    /// `binaryRequest(body:maxMessageBytes:)` for a body in an array: a unary binary POST's body is already the
    /// binary request, and is handed on as it stands rather than copied.
    public func binaryRequest(body: [UInt8], maxMessageBytes: Int) throws(ConnectFailure) -> [UInt8] {
        if getMessage == nil, !contentType.isStreaming, contentType.codec == .proto, body.count <= maxMessageBytes {
            return body
        }
        let result = body.withUnsafeBytes { bytes in
            Result { () throws(ConnectFailure) in try binaryRequest(body: bytes, maxMessageBytes: maxMessageBytes) }
        }
        return try result.get()
    }

    private func transcode(_ message: UnsafeRawBufferPointer, maxMessageBytes: Int) throws(ConnectFailure) -> [UInt8] {
        switch contentType.codec {
        case .proto:
            return Array(message)
        case .json:
            var options = Self.requestJSONOptions
            options.maxBytes = maxMessageBytes
            do {
                return try method.request(fromJSON: message, options: options)
            } catch {
                throw ConnectFailure(.invalidArgument, error.message)
            }
        }
    }

    /// A unary call's response body: the binary response, or its JSON.
    public func unaryResponseBody(_ binary: UnsafeRawBufferPointer) throws(ConnectFailure) -> [UInt8] {
        switch contentType.codec {
        case .proto: return Array(binary)
        case .json: return try json(binary)
        }
    }

    /// Appends one streamed response (`payload` followed by `suffix`, which protobuf merges on decode) as an
    /// envelope.
    public func appendStreamMessage(
        payload: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer, to out: inout [UInt8]
    ) throws(ConnectFailure) {
        switch contentType.codec {
        case .proto:
            let count = UInt32(truncatingIfNeeded: payload.count + suffix.count)
            out.append(0)
            out.append(contentsOf: [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)])
            out.append(contentsOf: payload)
            out.append(contentsOf: suffix)
        case .json:
            let message: [UInt8]
            if suffix.isEmpty {
                message = try json(payload)
            } else {
                let joined = Array(payload) + Array(suffix)
                message = try joined.withUnsafeBytes { bytes in
                    Result { () throws(ConnectFailure) in try json(bytes) }
                }.get()
            }
            ConnectEnvelope.append(flags: 0, payload: message, to: &out)
        }
    }

    /// The end-of-stream envelope: success, or the call's error.
    public static func streamEnd(_ error: RPCError?) -> [UInt8] {
        var out: [UInt8] = []
        ConnectEnvelope.append(flags: ConnectEnvelope.endStreamFlag, payload: ConnectBodies.endStreamJSON(error), to: &out)
        return out
    }

    private func json(_ binary: UnsafeRawBufferPointer) throws(ConnectFailure) -> [UInt8] {
        do {
            return try method.responseJSON(fromBinary: binary)
        } catch {
            throw ConnectFailure(.internal, "the response does not decode as \(method.path)'s: \(error.message)")
        }
    }
}

/// A unary error response: the mapped HTTP status and the JSON body (whatever the request's codec).
public struct ConnectErrorResponse: Sendable {
    public let status: Int
    public let contentType = "application/json"
    public let body: [UInt8]

    public init(_ error: RPCError) {
        status = error.code.connectHTTPStatus
        body = ConnectBodies.errorJSON(error)
    }
}
