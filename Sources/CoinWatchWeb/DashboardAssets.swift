/// The web dashboard coinwatchd serves at `/`: a single page of plain HTML, CSS and JavaScript (web/dashboard/)
/// that talks to the server over the Connect protocol. The files are embedded by scripts/generate-dashboard, so
/// the binary serves exactly what is committed and reads nothing from disk.
public enum DashboardAssets {
    /// The asset served at `path` (query string excluded); `/index.html` is the page too.
    public static func asset(atPath path: String) -> WebAsset? {
        let path = path == "/index.html" ? "/" : path
        return files.first { $0.path == path }
    }

    /// Every path served, for listings and tests.
    public static var paths: [String] { files.map(\.path) }

    /// Headers every asset response carries: the page may only load its own scripts and styles and call its own
    /// origin, must not be framed, and is revalidated (by ETag) rather than cached stale across upgrades.
    public static let securityHeaders: [(name: String, value: String)] = [
        ("Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-cache"),
    ]
}
