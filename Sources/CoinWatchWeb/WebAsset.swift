/// One file of the web dashboard, embedded in the binary.
public struct WebAsset: Sendable {
    /// The URL path it is served at (`/` for the page itself).
    public let path: String
    /// The `Content-Type` header value.
    public let contentType: String
    /// A strong validator for `ETag` / `If-None-Match`: a quoted prefix of the SHA-256 of the bytes.
    public let etag: String
    /// The file's bytes, exactly as committed under web/dashboard/.
    public let bytes: [UInt8]
}
