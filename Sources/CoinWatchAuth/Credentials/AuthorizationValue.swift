import CoinWatchRPC

/// Where a credential comes from on each transport, and how its text is read.
///
/// Every transport carries `authorization: Bearer <token>` (native call metadata and `Hello.auth_token`, gRPC
/// metadata, the HTTP header of Connect). The native protocol also takes the bare token, as clients written
/// against the publish token send it; an HTTP transport does not (a `Basic` header is not a token).
public enum AuthorizationValue {
    public enum Source: Sendable {
        /// `Hello.auth_token` or native call metadata: `Bearer <token>` or the bare token.
        case native
        /// An HTTP header or gRPC metadata: `Bearer <token>` only.
        case http
    }

    /// The token inside an `authorization` value: spaces and tabs around it ignored, the `Bearer` scheme in any
    /// case stripped (`ServerContext.bearerToken`).
    ///
    /// - Returns: nil for an empty value (no credential).
    /// - Throws: `.malformed` for a `Bearer` with nothing after it, or a value without the scheme on HTTP.
    public static func token(in value: String, source: Source) throws(CredentialFailure) -> String? {
        let trimmed = trimmed(value)
        guard !trimmed.isEmpty else { return nil }
        let token = ServerContext.bearerToken(trimmed)
        guard token.utf8.count == trimmed.utf8.count else {
            guard !token.isEmpty else { throw .malformed }
            return token
        }
        // No scheme was stripped: a bare token, or a lone "Bearer" whose space was trimmed above.
        guard source == .native, !trimmed.utf8.elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }) else {
            throw .malformed
        }
        return trimmed
    }

    private static func trimmed(_ value: String) -> String {
        var bytes = Substring(value).utf8[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return bytes.count == value.utf8.count ? value : String(decoding: bytes, as: UTF8.self)
    }
}
