import CoinWatchWeb
import Foundation
import Testing

/// The embedded dashboard is exactly web/dashboard/, and the page refers only to files that are served.
@Suite("Dashboard assets")
struct DashboardAssetsTests {
    static let source = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("web/dashboard")

    @Test("every file of web/dashboard is embedded byte for byte, and nothing else")
    func embeddedMatchesSource() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.source.path).filter { !$0.hasPrefix(".") }
        #expect(Set(DashboardAssets.paths) == Set(names.map { $0 == "index.html" ? "/" : "/" + $0 }))
        for name in names {
            let bytes = [UInt8](try Data(contentsOf: Self.source.appendingPathComponent(name)))
            let asset = try #require(DashboardAssets.asset(atPath: name == "index.html" ? "/" : "/" + name))
            // Compared first, so a difference reports the file, not two arrays of tens of thousands of bytes.
            let same = asset.bytes == bytes
            #expect(same, "\(name) differs from its embedded copy: run scripts/generate-dashboard")
        }
    }

    @Test("content types, ETags and the index alias")
    func metadata() throws {
        let page = try #require(DashboardAssets.asset(atPath: "/"))
        #expect(page.contentType == "text/html; charset=utf-8")
        #expect(DashboardAssets.asset(atPath: "/index.html")?.bytes == page.bytes)
        #expect(DashboardAssets.asset(atPath: "/dashboard.js")?.contentType == "text/javascript; charset=utf-8")
        #expect(DashboardAssets.asset(atPath: "/dashboard.css")?.contentType == "text/css; charset=utf-8")
        #expect(DashboardAssets.asset(atPath: "/missing.js") == nil)
        let etags = DashboardAssets.paths.compactMap { DashboardAssets.asset(atPath: $0)?.etag }
        #expect(Set(etags).count == etags.count)
        #expect(etags.allSatisfy { $0.hasPrefix("\"") && $0.hasSuffix("\"") && $0.count == 18 })
    }

    @Test("the page loads only its own files, so the content security policy holds")
    func pageReferences() throws {
        let page = String(decoding: try #require(DashboardAssets.asset(atPath: "/")).bytes, as: UTF8.self)
        for reference in ["/dashboard.css", "/dashboard.js"] {
            #expect(page.contains("\"\(reference)\""))
            #expect(DashboardAssets.asset(atPath: reference) != nil)
        }
        #expect(!page.contains("http://") && !page.contains("https://"), "the page must not load anything from elsewhere")
        #expect(!page.contains("<script>"), "inline scripts would be refused by script-src 'self'")
        #expect(!page.contains("style="), "inline styles would be refused by style-src 'self'")
        let policy = DashboardAssets.securityHeaders.first { $0.name == "Content-Security-Policy" }?.value
        #expect(policy?.contains("connect-src 'self'") == true)
    }
}

@Suite("Dashboard responses")
struct DashboardResponseTests {
    @Test("200 with type, ETag and security headers; 304 when the ETag matches; nil elsewhere")
    func responses() throws {
        let page = try #require(DashboardAssets.response(path: "/", ifNoneMatch: nil))
        #expect(page.status == 200)
        #expect(page.headers.first { $0.name == "Content-Type" }?.value == "text/html; charset=utf-8")
        let etag = try #require(page.headers.first { $0.name == "ETag" }?.value)
        #expect(page.headers.contains { $0.name == "Content-Security-Policy" })
        #expect(page.body == DashboardAssets.asset(atPath: "/")?.bytes)
        #expect(DashboardAssets.response(path: "/", ifNoneMatch: etag)?.status == 304)
        #expect(DashboardAssets.response(path: "/", ifNoneMatch: "\"other\", W/\(etag)")?.status == 304)
        #expect(DashboardAssets.response(path: "/", ifNoneMatch: "\"other\"")?.status == 200)
        #expect(DashboardAssets.response(path: "/", ifNoneMatch: etag)?.body.isEmpty == true)
        #expect(DashboardAssets.response(path: "/metrics", ifNoneMatch: nil) == nil)
    }
}
