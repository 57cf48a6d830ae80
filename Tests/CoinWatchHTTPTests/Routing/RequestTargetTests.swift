import Testing
@testable import CoinWatchHTTP

/// A request target is split once, at its first question mark.
@Suite struct RequestTargetTests {
    @Test("path and query, split at the first question mark")
    func split() {
        let cases: [(String, Substring, Substring?)] = [
            ("/a/b", "/a/b", nil),
            ("/a?x=1?y", "/a", "x=1?y"),
            ("/a?", "/a", ""),
            ("?q", "", "q"),
            ("", "", nil),
            ("/é/ü?ñ=1", "/é/ü", "ñ=1"),
        ]
        for (text, path, query) in cases {
            let target = RequestTarget(text)
            #expect(target.text == text)
            #expect(target.path == path, "\(text)")
            #expect(target.query == query, "\(text)")
        }
    }
}
