extension DashboardAssets {
    /// The answer to `GET` or `HEAD` of `path`: 200 with the file, or 304 when `If-None-Match` names its ETag;
    /// nil when no asset is at `path`.
    public static func response(path: Substring, ifNoneMatch: String?) -> (status: Int, headers: [(name: String, value: String)], body: [UInt8])? {
        guard let asset = asset(atPath: String(path)) else { return nil }
        var headers: [(name: String, value: String)] = [("ETag", asset.etag)] + securityHeaders
        if let ifNoneMatch, ifNoneMatch.split(separator: ",").contains(where: { tag in
            let trimmed = tag.trimmingPrefix(" ").trimmingPrefix("W/")
            return trimmed == asset.etag || trimmed == "*"
        }) {
            return (304, headers, [])
        }
        headers.insert(("Content-Type", asset.contentType), at: 0)
        return (200, headers, asset.bytes)
    }
}
