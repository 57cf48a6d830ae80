import Testing
@testable import CoinWatchHTTP

/// The HTTP/1.1 parser: strict framing, limits with the right status, and the same requests however the bytes
/// are split.
@Suite struct HTTP1ParserTests {
    static func parse(_ text: String, limits: HTTP1Parser.Limits = .init(), chunk: Int = .max) throws(HTTP1ParseError) -> [HTTP1Request] {
        var parser = HTTP1Parser(limits: limits)
        var requests: [HTTP1Request] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            let slice = Array(bytes[start..<end])
            let failure = slice.withUnsafeBytes { buffer -> HTTP1ParseError? in
                do throws(HTTP1ParseError) {
                    try parser.parse(buffer, into: &requests)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { throw failure }
            start = end
        }
        return requests
    }

    static func status(_ text: String, limits: HTTP1Parser.Limits = .init()) -> Int? {
        do {
            _ = try parse(text, limits: limits)
            return nil
        } catch {
            return error.status
        }
    }

    static let pipelined = "GET /metrics HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n"
        + "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
        + "POST /y HTTP/1.1\r\nhost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n"
        + "GET /z HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"

    @Test("pipelined requests come out in order, the same at every split")
    func pipelinedAtEverySplit() throws {
        for chunk in [1, 2, 3, 7, 64, Int.max] {
            let requests = try Self.parse(Self.pipelined, chunk: chunk)
            #expect(requests.map(\.method) == ["GET", "POST", "POST", "GET"])
            #expect(requests.map(\.target.text) == ["/metrics", "/x", "/y", "/z"])
            #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == ["", "hello", "abcde", ""])
            #expect(requests[0].header("accept") == "*/*")
            #expect(requests[0].keepAlive && requests[3].keepAlive)
            #expect(requests[3].minorVersion == 0)
        }
    }

    @Test("a request that repeats the one before it reads as itself, and a change at any place is seen")
    func repeatedRequestsReadAsThemselves() throws {
        let base = ["POST", "/coinwatch.v1.CoinWatch/GetSettings", "application/proto-long-enough-to-allocate", "x-a-value"]
        func request(_ parts: [String]) -> String {
            "\(parts[0]) \(parts[1]) HTTP/1.1\r\nHost: a\r\nContent-Type: \(parts[2])\r\nX-Note: \(parts[3])\r\n"
                + "Content-Length: 1\r\n\r\nz"
        }
        // The base, then each part changed in turn (same length and not), then the base again.
        var variants = [base]
        for place in base.indices {
            for changed in [String(base[place].dropLast()) + "Q", base[place] + "-longer", "s"] {
                var parts = base
                parts[place] = place == 0 ? (changed == "s" ? "PUT" : "PATCH") : (place == 1 ? "/" + changed : changed)
                variants.append(parts)
                variants.append(base)
            }
        }
        for chunk in [1, 5, Int.max] {
            let requests = try Self.parse(variants.map(request).joined(), chunk: chunk)
            #expect(requests.count == variants.count)
            for (request, parts) in zip(requests, variants) {
                #expect([request.method, request.target.text, request.header("content-type") ?? "", request.header("x-note") ?? ""]
                        == parts)
                #expect(request.headers.map(\.name) == ["host", "content-type", "x-note", "content-length"])
            }
        }
    }

    /// Everything a request carries, to compare two parses of it.
    static func describe(_ requests: [HTTP1Request]) -> [String] {
        requests.map { request in
            "\(request.method) \(request.target.text) 1.\(request.minorVersion) "
                + request.headers.map { "\($0.name)=\($0.value)" }.joined(separator: "|") + " " + String(decoding: request.body, as: UTF8.self)
        }
    }

    /// `stream` parsed whole and one byte at a time (when no head lies whole in one read, so none is recognised
    /// as the kept one): the requests and the refusal status of each, and how many heads the whole parse
    /// recognised.
    static func wholeAndByBytes(_ stream: String, limits: HTTP1Parser.Limits = .init())
        -> (whole: [String], byBytes: [String], repeated: Int)
    {
        func run(_ chunk: Int) -> ([String], Int) {
            var parser = HTTP1Parser(limits: limits)
            var requests: [HTTP1Request] = []
            var failure: HTTP1ParseError?
            let bytes = Array(stream.utf8)
            var start = 0
            while start < bytes.count && failure == nil {
                let end = min(bytes.count, start + chunk)
                Array(bytes[start..<end]).withUnsafeBytes { buffer in
                    do throws(HTTP1ParseError) { try parser.parse(buffer, into: &requests) } catch { failure = error }
                }
                start = end
            }
            return (describe(requests) + [failure.map { "refused \($0.status)" } ?? "ok"], parser.repeatedHeads)
        }
        let whole = run(.max)
        return (whole.0, run(1).0, whole.1)
    }

    @Test("a head repeated but for its Content-Length is recognised whole, and reads as the machine reads it")
    func keptHead() {
        let head = "POST /coinwatch.v1.CoinWatch/GetSettings HTTP/1.1\r\nHost: a\r\nContent-Length: "
        let tail = "\r\nContent-Type: application/proto\r\n\r\n"
        func request(_ length: String, _ body: String = "") -> String { head + length + tail + body }
        // Each case: a first request whose head is kept, then what follows it; and whether a head is recognised.
        let cases: [(String, Bool)] = [
            (request("3", "abc") + request("3", "xyz") + request("10", "0123456789") + request("0") + request("007", "1234567"), true),
            (request("3", "abc") + request("003", "abc") + request("1", "a"), true),
            (request("3", "abc") + request("123456789012", "") , false),          // over the body limit: 413
            (request("3", "abc") + request("1234567890123", ""), false),          // 13 digits: 400
            (request("3", "abc") + request("3a", "abc"), false),                  // not a number: 400
            (request("3", "abc") + request("", "abc"), false),                    // no digits: 400
            (request("3", "abc") + request(" 3 ", "abc"), false),                 // other whitespace: another head
            (request("3", "abc") + request("3", "ab"), true),                     // the body is still to come
            (request("3", "abc") + head.replacing("Settings", with: "Settingz") + "3" + tail + "abc", false),
            (request("3", "abc") + head.replacing("Host", with: "host") + "3" + tail + "abc", false),
            (request("3", "abc") + head + "3\r\nContent-Length: 3" + tail + "abc", false),  // two lengths: machine
            ("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
                + "GET /metrics HTTP/1.1\r\nHost: b\r\n\r\n", true),
            ("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /metrics HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", false),
            (request("3", "abc") + request("3", "abc") + "GET / HTTP/1.1\r\n\r\n", true),  // then no Host: 400
        ]
        for (stream, recognised) in cases {
            let outcome = Self.wholeAndByBytes(stream)
            #expect(outcome.whole == outcome.byBytes, "\(stream)")
            #expect((outcome.repeated > 0) == recognised, "\(stream)")
        }
        // The next request's start, shorter than the kept head up to its digits (the length is its last field):
        // left for the machine to wait on, as it does.
        let last = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
        for cut in 1..<last.utf8.count {
            let outcome = Self.wholeAndByBytes(last + String(last.utf8.prefix(cut))!)
            #expect(outcome.whole == outcome.byBytes, "\(cut)")
        }
        // A head at the field section's limit is not taken past it by longer digits.
        var limits = HTTP1Parser.Limits()
        let fields = "Host: a\r\nContent-Length: "
        limits.maxHeaderBytes = "Host: a".utf8.count + "Content-Length: 1".utf8.count
        let small = "POST /x HTTP/1.1\r\n" + fields + "1\r\n\r\nz" + "POST /x HTTP/1.1\r\n" + fields + "2\r\n\r\nzz"
            + "POST /x HTTP/1.1\r\n" + fields + "10\r\n\r\n0123456789"
        let outcome = Self.wholeAndByBytes(small, limits: limits)
        #expect(outcome.whole == outcome.byBytes)
        #expect(outcome.whole.last == "refused 431")
        #expect(outcome.repeated == 1)
        // Heads with Expect or Transfer-Encoding are left to the machine.
        let expect = "POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nz"
        let chunked = "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n"
        for stream in [expect + expect, chunked + chunked] {
            let outcome = Self.wholeAndByBytes(stream)
            #expect(outcome.whole == outcome.byBytes)
            #expect(outcome.repeated == 0)
        }
    }

    @Test("a connection's kept head goes with the other spares when its request became a stream")
    func keptHeadForgotten() throws {
        var parser = HTTP1Parser()
        var requests: [HTTP1Request] = []
        let request = Array("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        func feed() throws {
            var bytes = request
            try bytes.withUnsafeMutableBytes { try parser.parse(UnsafeRawBufferPointer($0), into: &requests) }
        }
        try feed()
        try feed()
        #expect(parser.repeatedHeads == 1)
        parser.forgetRecycled()
        try feed()
        #expect(parser.repeatedHeads == 1)
        try feed()
        #expect(parser.repeatedHeads == 2)
        #expect(Self.describe(requests) == Array(repeating: Self.describe([requests[0]])[0], count: 4))
    }

    @Test("a repeated head whose body is still coming survives the kept head being let go")
    func keptHeadForgottenMidBody() throws {
        var parser = HTTP1Parser()
        var requests: [HTTP1Request] = []
        func feed(_ text: String) throws {
            var bytes = Array(text.utf8)
            try bytes.withUnsafeMutableBytes { try parser.parse(UnsafeRawBufferPointer($0), into: &requests) }
        }
        let head = "POST /coinwatch.v1.CoinWatch/StreamPrices?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n"
        try feed(head + "abcd")
        // The same head again, pipelined, with half its body: the first request then became a stream, and the
        // session lets the kept head go before the rest of the body arrives.
        try feed(head + "abcd" + head + "ef")
        #expect(parser.repeatedHeads == 2)
        #expect(requests.count == 2)
        parser.forgetRecycled()
        try feed("gh")
        #expect(requests.count == 3)
        #expect(requests.last?.target.path == "/coinwatch.v1.CoinWatch/StreamPrices")
        #expect(requests.last?.target.text == "/coinwatch.v1.CoinWatch/StreamPrices?x=1")
        #expect(requests.last?.body == Array("efgh".utf8))
    }

    @Test("keep-alive by version and Connection")
    func keepAlive() throws {
        #expect(try !Self.parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")[0].keepAlive)
        #expect(try !Self.parse("GET / HTTP/1.0\r\n\r\n")[0].keepAlive)
        #expect(try Self.parse("GET /p?q=1 HTTP/1.1\r\nHost: a\r\n\r\n")[0].target.path == "/p")
    }

    @Test("malformed requests are 400")
    func badRequests() {
        let cases = [
            "GET / HTTP/1.1\nHost: a\r\n\r\n",                      // bare LF
            "GET / HTTP/1.1\r\nHost : a\r\n\r\n",                   // space before the colon
            "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",          // obsolete folding
            "GET / HTTP/1.1\r\n\r\n",                               // no Host
            "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",          // two Hosts
            "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",                     // not a token
            " GET / HTTP/1.1\r\n",
            "GET /\u{1} HTTP/1.1\r\n",
            "GET / HTTP/1.1\r\nHost: a\u{7f}\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
            "GET / HTTQ/1.1\r\n",
        ]
        for text in cases {
            #expect(Self.status(text) == 400, "\(text.debugDescription)")
        }
    }

    @Test("limits answer 414, 431 and 413; unsupported framing 501 and 505")
    func limits() {
        var small = HTTP1Parser.Limits()
        small.maxRequestLineBytes = 32
        small.maxHeaderBytes = 64
        small.maxHeaderCount = 3
        small.maxBodyBytes = 8
        #expect(Self.status("GET /\(String(repeating: "a", count: 40)) HTTP/1.1\r\n", limits: small) == 414)
        #expect(Self.status("GET / HTTP/1.1\r\nHost: a\r\nX: \(String(repeating: "b", count: 80))\r\n\r\n", limits: small) == 431)
        #expect(Self.status("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: small) == 431)
        #expect(Self.status("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\n", limits: small) == 413)
        #expect(Self.status("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n5\r\n", limits: small) == 413)
        #expect(Self.status("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n") == 501)
        #expect(Self.status("GET / HTTP/2.0\r\n") == 505)
    }

    @Test("a limit falls on the same byte whether the bytes come whole or one at a time")
    func limitsAtEverySplit() {
        var small = HTTP1Parser.Limits()
        small.maxRequestLineBytes = 32
        small.maxHeaderBytes = 64
        func outcome(_ text: String, chunk: Int) -> Int {
            do { return try Self.parse(text, limits: small, chunk: chunk).count } catch { return -error.status }
        }
        var seen = Set<Int>()
        for length in 10...40 {
            let line = "GET /\(String(repeating: "a", count: length)) HTTP/1.1\r\nHost: a\r\n\r\n"
            let field = "GET / HTTP/1.1\r\nHost: a\r\nX-Long: \(String(repeating: "b", count: length + 20))\r\n\r\n"
            for text in [line, field] {
                let whole = outcome(text, chunk: .max)
                #expect(outcome(text, chunk: 1) == whole && outcome(text, chunk: 5) == whole, "\(text.debugDescription)")
                seen.insert(whole)
            }
        }
        // Both limits were crossed inside the range, each just past a request that was taken.
        #expect(seen == [1, -414, -431])
        // Method, target and version: 3 + 21 + 8 = 32 bytes is the limit.
        #expect(outcome("GET /\(String(repeating: "a", count: 20)) HTTP/1.1\r\nHost: a\r\n\r\n", chunk: .max) == 1)
        #expect(outcome("GET /\(String(repeating: "a", count: 21)) HTTP/1.1\r\nHost: a\r\n\r\n", chunk: .max) == -414)
    }

    @Test("field names are lower-cased and values trimmed, at every split")
    func fieldsAtEverySplit() throws {
        let text = "POST /p HTTP/1.1\r\nHOST: a\r\nContent-Type: \t application/PROTO \t\r\nX-Empty:   \r\nX-Tab:\tv w\r\n\r\n"
        for chunk in [1, 2, 4, 9, Int.max] {
            let request = try #require(try Self.parse(text, chunk: chunk).first)
            #expect(request.headers.map(\.name) == ["host", "content-type", "x-empty", "x-tab"])
            #expect(request.headers.map(\.value) == ["a", "application/PROTO", "", "v w"])
        }
    }

    @Test("an unfinished request is remembered as begun, and a failure sticks")
    func state() {
        var parser = HTTP1Parser()
        var requests: [HTTP1Request] = []
        func feed(_ text: String) -> HTTP1ParseError? {
            Array(text.utf8).withUnsafeBytes { bytes -> HTTP1ParseError? in
                do throws(HTTP1ParseError) {
                    try parser.parse(bytes, into: &requests)
                    return nil
                } catch {
                    return error
                }
            }
        }
        #expect(feed("GET / HT") == nil)
        #expect(parser.isInsideRequest && requests.isEmpty)
        #expect(feed("TP/9\r\n")?.status == 400)
        #expect(feed("GET / HTTP/1.1\r\n")?.status == 400)
    }
}
