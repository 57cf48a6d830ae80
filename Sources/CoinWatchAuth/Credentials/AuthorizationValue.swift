/// Where a credential comes from on each transport, and how its text is read.
///
/// Every transport carries `authorization: Bearer <token>` (native call metadata and `Hello.auth_token`, gRPC
/// metadata, the HTTP header of Connect). The native protocol also takes the bare token, as clients written
/// against the publish token send it.
public enum AuthorizationValue {
    public enum Source: Sendable {
        /// `Hello.auth_token` or native call metadata: `Bearer <token>` or the bare token.
        case native
        /// An HTTP header or gRPC metadata: `Bearer <token>` only.
        case http
    }

    /// The token inside an `authorization` value.
    ///
    /// The scheme is matched without regard to case (RFC 9110 §11.1) and may be followed by any number of spaces;
    /// spaces and tabs around the whole value are ignored.
    ///
    /// - Returns: nil for an empty value (no credential).
    /// - Throws: `.malformed` for a scheme other than Bearer on HTTP, or a Bearer with nothing after it.
    public static func token(in value: some Collection<UInt8>, source: Source) throws(CredentialFailure) -> ArraySlice<UInt8>? {
        var bytes = ArraySlice(value)
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        guard !bytes.isEmpty else { return nil }
        // "Bearer " with nothing after it, its trailing space trimmed above.
        if bytes.count == bearer.count - 1, hasBearerScheme(bytes + [0x20]) { throw .malformed }
        if hasBearerScheme(bytes) {
            var token = bytes.dropFirst(bearer.count)
            while let first = token.first, first == 0x20 { token.removeFirst() }
            guard !token.isEmpty else { throw .malformed }
            return token
        }
        switch source {
        case .native:
            return bytes
        case .http:
            throw .malformed
        }
    }

    /// `Bearer` followed by a space.
    private static let bearer = Array("bearer ".utf8)

    private static func hasBearerScheme(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count >= bearer.count else { return false }
        for (byte, expected) in zip(bytes, bearer) where byte | 0x20 != expected {
            return false
        }
        return true
    }
}
