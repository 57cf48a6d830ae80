import CoinWatchCore

/// A strict, incremental HTTP/1.1 request parser (RFC 9112) with limits.
///
/// Fed whatever each read returned, it walks the bytes once with a state machine, so a request split across
/// any number of reads costs the same as one read and a peer sending a byte at a time cannot make it rescan.
/// It keeps only what a request needs (the fields and the body, up to their limits) and delivers complete
/// requests in order, so pipelined requests come out one after another.
///
/// Strict: lines end in CRLF (a bare CR or LF is an error), field names are tokens with no space before the
/// colon, obsolete line folding is refused, `Content-Length` and `Transfer-Encoding` together are refused (the
/// request-smuggling ambiguity), only `chunked` transfer coding is understood, HTTP/1.1 requests need exactly
/// one `Host`. Each refusal carries the status to answer: 400, 413 (body), 414 (request line), 431 (fields),
/// 501 (transfer coding), 505 (version). After an error the parser stays failed.
///
/// Why hand-written: Debian packages no maintained incremental parser with limits that fits (the Node.js
/// http-parser is archived, llhttp and picohttpparser have no Debian development package), and HTTP/1.1 here
/// serves small requests (operators' endpoints, unary calls). The machine steps on delimiters only: runs of
/// ordinary bytes between them are checked and copied in one tight loop, and a keep-alive client's repeated head
/// is recognised whole (`KeptHead`) rather than stepped through again.
/// `Fuzz/FuzzHTTP1` fuzzes it.
struct HTTP1Parser {
    struct Limits: Sendable {
        /// Method, target and version, without the CRLF.
        var maxRequestLineBytes = 8 * 1024
        /// Every field line together (and a chunked body's trailer fields).
        var maxHeaderBytes = 16 * 1024
        var maxHeaderCount = 100
        /// The decoded body.
        var maxBodyBytes = 4 << 20

        init() {}
    }

    private enum State {
        case method, target, version, requestLineLF
        case fieldStart, fieldName, fieldValue, fieldLF, headersLF
        case body(remaining: Int)
        case chunkSize, chunkExtension, chunkSizeLF
        case chunkData(remaining: Int)
        case chunkDataCR, chunkDataLF
        case trailerStart, trailerLine, trailerLF, trailerEndLF
        case failed(HTTP1ParseError)
    }

    let limits: Limits
    private var state = State.method
    private var token: [UInt8] = []
    /// The token when it is one run of the input being parsed (a target, a field value): read where it lies
    /// rather than copied into `token` first. Only set inside `parse`, which copies it into `token` before it
    /// returns if the token goes on in the next read.
    private var direct: UnsafeRawBufferPointer?
    private var method = ""
    private var target = ""
    private var minorVersion = 1
    private var headers: [(name: String, value: String)] = []
    private var fieldName = ""
    private var lineBytes = 0
    private var headerBytes = 0
    private var body: [UInt8] = []
    private var chunkSize = 0
    private var chunkDigits = 0
    /// The strings the previous request's line and fields were made into, in the order they were taken, and this
    /// request's so far. A keep-alive client repeats its target and most field lines byte for byte, in the same
    /// order; a repeated one is the same `String` again instead of a new allocation (two to four per request).
    private var previousStrings: [String] = []
    private var strings: [String] = []
    /// A delivered request's field and body arrays, given back emptied (`recycle`) for the next request to fill
    /// without allocating.
    private var spareHeaders: [(name: String, value: String)] = []
    private var spareBody: [UInt8] = []
    /// The last qualifying head, for the next request to be recognised by (`KeptHead`). Boxed, so that a parser
    /// without one (a connection whose request became a stream) carries only a reference.
    private var keptHead: KeptHead?
    /// The read being parsed and where the current request began in it (nil when it began in an earlier read):
    /// only set inside `parse`, for `headersComplete` to keep the head.
    private var input: UnsafeRawBufferPointer?
    private var requestStart: Int?
    private var position = 0
    /// The kept head the request being read came with (its target split already), held by the request itself:
    /// the parser may let its kept head go (`forgetRecycled`) while this request's body is still arriving.
    private var repeatedHead: KeptHead?
    /// How many heads were recognised as the kept one (tests read it).
    private(set) var repeatedHeads = 0
    /// Bytes of a request seen so far (0 between requests): the session times out slow requests by it.
    private(set) var bytesInRequest = 0
    /// The request being read sent `Expect: 100-continue` and its body has not begun: the client waits for
    /// `100 Continue` before sending it (curl does for bodies over 1 KiB). The session answers and clears it.
    var awaitsContinue = false

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Whether a request has begun and is not complete.
    var isInsideRequest: Bool { bytesInRequest > 0 }

    /// Parses `bytes`, appending every request it completes to `requests`.
    mutating func parse(_ bytes: UnsafeRawBufferPointer, into requests: inout [HTTP1Request]) throws(HTTP1ParseError) {
        input = bytes
        requestStart = nil
        defer { input = nil }
        var index = 0
        while index < bytes.count {
            if case .failed(let error) = state { throw error }
            if bytesInRequest == 0 {
                // A new request: its head may be the kept one again.
                if let keptHead, let match = keptHead.match(UnsafeRawBufferPointer(rebasing: bytes[index...]), limits: limits) {
                    index += match.count
                    if let request = request(repeating: keptHead, count: match.count, digits: match.digits) { requests.append(request) }
                    continue
                }
                requestStart = index
            }
            // Bodies are copied in runs, not byte by byte.
            if case .body(let remaining) = state {
                let take = min(remaining, bytes.count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
                index += take
                bytesInRequest += take
                if take == remaining {
                    requests.append(finish())
                } else {
                    state = .body(remaining: remaining - take)
                }
                continue
            }
            if case .chunkData(let remaining) = state {
                let take = min(remaining, bytes.count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
                index += take
                bytesInRequest += take
                state = take == remaining ? .chunkDataCR : .chunkData(remaining: remaining - take)
                continue
            }
            do throws(HTTP1ParseError) {
                // A run of bytes the state machine would only append (inside the method, target, version, a
                // field's name or value) is checked and copied in one pass; the machine sees the delimiters.
                let run = ordinaryRun(in: bytes, from: index)
                if run > 0 {
                    try appendRun(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + run)]))
                    index += run
                    bytesInRequest += run
                    continue
                }
                let byte = bytes[index]
                index += 1
                bytesInRequest += 1
                position = index
                if let request = try step(byte) { requests.append(request) }
            } catch {
                state = .failed(error)
                direct = nil
                throw error
            }
        }
        keepToken()
        if case .failed(let error) = state { throw error }
    }

    // MARK: Runs

    /// How many bytes from `start` the current state takes as they are: exactly the bytes `step` would
    /// append to the token without a state change, so a run and a byte at a time parse alike.
    private func ordinaryRun(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var end = start
        switch state {
        case .method, .fieldName:
            while end < bytes.count && Self.isToken(bytes[end]) { end += 1 }
        case .target, .version:
            while end < bytes.count && bytes[end] > 0x20 && bytes[end] < 0x7f { end += 1 }
        case .fieldValue:
            while end < bytes.count && (bytes[end] >= 0x20 ? bytes[end] != 0x7f : bytes[end] == 0x09) { end += 1 }
        default:
            break
        }
        return end - start
    }

    /// Appends a run `ordinaryRun` measured, counting it against the request line's or the fields' limit as
    /// `step` counts each byte.
    private mutating func appendRun(_ run: UnsafeRawBufferPointer) throws(HTTP1ParseError) {
        switch state {
        case .method, .target, .version:
            try requestLineByte(run.count)
            appendToken(run)
        case .fieldValue:
            try headerByte(run.count)
            appendToken(run)
        case .fieldName:
            try headerByte(run.count)
            let start = token.count
            token.append(contentsOf: run)
            for index in start..<token.count { token[index] = Self.lowercase(token[index]) }
        default:
            preconditionFailure("ordinaryRun is 0 in other states")
        }
    }

    // MARK: The state machine

    private mutating func step(_ byte: UInt8) throws(HTTP1ParseError) -> HTTP1Request? {
        switch state {
        case .method:
            if byte == 0x20 {
                guard !tokenIsEmpty else { throw .bad("the request line starts with a space") }
                method = take()
                state = .target
            } else {
                guard Self.isToken(byte) else { throw .bad("the method contains a character a method may not") }
                try requestLineByte()
                keepToken()
                token.append(byte)
            }
        case .target:
            if byte == 0x20 {
                guard !tokenIsEmpty else { throw .bad("the request target is empty") }
                target = take()
                state = .version
            } else {
                guard byte > 0x20 && byte < 0x7f else { throw .bad("the request target contains a space or control character") }
                try requestLineByte()
                keepToken()
                token.append(byte)
            }
        case .version:
            if byte == 0x0d {
                let version = take()
                switch version {
                case "HTTP/1.1": minorVersion = 1
                case "HTTP/1.0": minorVersion = 0
                default:
                    if version.hasPrefix("HTTP/") && version.count == 8 {
                        throw HTTP1ParseError(status: 505, message: "\(version) is not supported; use HTTP/1.1 (or HTTP/2)")
                    }
                    throw .bad("the request line does not end in HTTP/1.1")
                }
                state = .requestLineLF
            } else {
                guard byte > 0x20 && byte < 0x7f else { throw .bad("the request line is malformed") }
                try requestLineByte()
                keepToken()
                token.append(byte)
            }
        case .requestLineLF:
            guard byte == 0x0a else { throw .bad("the request line does not end in CRLF") }
            state = .fieldStart
        case .fieldStart:
            if byte == 0x0d {
                state = .headersLF
            } else if byte == 0x20 || byte == 0x09 {
                throw .bad("obsolete line folding (a field line starting with whitespace) is not accepted")
            } else {
                guard Self.isToken(byte) else { throw .bad("a field name contains a character a name may not") }
                guard headers.count < limits.maxHeaderCount else {
                    throw HTTP1ParseError(status: 431, message: "more than \(limits.maxHeaderCount) header fields")
                }
                try headerByte()
                token.append(Self.lowercase(byte))
                if headers.isEmpty { headers.reserveCapacity(8) }  // one allocation for a usual request's fields
                state = .fieldName
            }
        case .fieldName:
            if byte == 0x3a {
                fieldName = take()
                try headerByte()
                state = .fieldValue
            } else {
                guard Self.isToken(byte) else {
                    throw .bad(byte == 0x20 || byte == 0x09 ? "whitespace before a field's colon"
                               : "a field name contains a character a name may not")
                }
                try headerByte()
                token.append(Self.lowercase(byte))
            }
        case .fieldValue:
            if byte == 0x0d {
                let value = withToken { parser, token in
                    let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
                    let start = token.firstIndex { !isSpace($0) } ?? token.endIndex
                    let end = token.lastIndex { !isSpace($0) }.map { $0 + 1 } ?? start
                    return parser.string(UnsafeRawBufferPointer(rebasing: token[start..<end]))
                }
                headers.append((fieldName, value))
                clearToken()
                state = .fieldLF
            } else {
                guard byte == 0x09 || (byte >= 0x20 && byte != 0x7f) else {
                    throw .bad("a field value contains a control character")
                }
                try headerByte()
                keepToken()
                token.append(byte)
            }
        case .fieldLF:
            guard byte == 0x0a else { throw .bad("a field line does not end in CRLF") }
            state = .fieldStart
        case .headersLF:
            guard byte == 0x0a else { throw .bad("the header section does not end in CRLF") }
            return try headersComplete()
        case .chunkSize:
            if let digit = Self.hexValue(byte) {
                chunkDigits += 1
                guard chunkDigits <= 8 else {
                    throw HTTP1ParseError(status: 413, message: "a chunk is larger than \(limits.maxBodyBytes) bytes")
                }
                chunkSize = chunkSize << 4 | digit
            } else if byte == 0x3b || byte == 0x20 || byte == 0x09 {
                guard chunkDigits > 0 else { throw .bad("a chunk size is missing") }
                state = .chunkExtension
            } else if byte == 0x0d {
                guard chunkDigits > 0 else { throw .bad("a chunk size is missing") }
                state = .chunkSizeLF
            } else {
                throw .bad("a chunk size is not hexadecimal")
            }
        case .chunkExtension:
            // Extensions are skipped, within the header budget.
            if byte == 0x0d {
                state = .chunkSizeLF
            } else {
                guard byte == 0x09 || (byte >= 0x20 && byte != 0x7f) else { throw .bad("a chunk extension contains a control character") }
                try headerByte()
            }
        case .chunkSizeLF:
            guard byte == 0x0a else { throw .bad("a chunk size line does not end in CRLF") }
            let size = chunkSize
            chunkSize = 0
            chunkDigits = 0
            if size == 0 {
                state = .trailerStart
            } else {
                guard body.count + size <= limits.maxBodyBytes else {
                    throw HTTP1ParseError(status: 413, message: "the body is larger than \(limits.maxBodyBytes) bytes")
                }
                state = .chunkData(remaining: size)
            }
        case .chunkDataCR:
            guard byte == 0x0d else { throw .bad("a chunk is longer than its size") }
            state = .chunkDataLF
        case .chunkDataLF:
            guard byte == 0x0a else { throw .bad("a chunk does not end in CRLF") }
            state = .chunkSize
        case .trailerStart:
            if byte == 0x0d {
                state = .trailerEndLF
            } else {
                // Trailer fields are read and dropped, within the header budget.
                try headerByte()
                state = .trailerLine
            }
        case .trailerLine:
            if byte == 0x0d {
                state = .trailerLF
            } else {
                guard byte == 0x09 || (byte >= 0x20 && byte != 0x7f) else { throw .bad("a trailer field contains a control character") }
                try headerByte()
            }
        case .trailerLF:
            guard byte == 0x0a else { throw .bad("a trailer field does not end in CRLF") }
            state = .trailerStart
        case .trailerEndLF:
            guard byte == 0x0a else { throw .bad("the chunked body does not end in CRLF") }
            return finish()
        case .body, .chunkData, .failed:
            preconditionFailure("handled by parse")
        }
        return nil
    }

    /// The header section ended: checks the framing fields and picks how the body is read.
    private mutating func headersComplete() throws(HTTP1ParseError) -> HTTP1Request? {
        // One pass over the fields: this runs for every request.
        var hosts = 0
        var firstLength: String?
        var lengthsDiffer = false
        var hasCoding = false
        for (name, value) in headers {
            switch name {
            case "host": hosts += 1
            case "content-length":
                if let firstLength { lengthsDiffer = lengthsDiffer || value != firstLength } else { firstLength = value }
            case "transfer-encoding": hasCoding = true
            default: break
            }
        }
        if minorVersion == 1 && hosts != 1 {
            throw .bad(hosts == 0 ? "an HTTP/1.1 request needs a Host field" : "more than one Host field")
        }
        if hasCoding {
            let codings = values(of: "transfer-encoding")
            guard firstLength == nil else { throw .bad("both Content-Length and Transfer-Encoding are set") }
            let all = codings.flatMap { $0.lowercased().split(separator: ",").map { $0.trimmingSpaces } }
            guard all == ["chunked"] else {
                throw HTTP1ParseError(status: 501, message: "transfer coding '\(codings.joined(separator: ", "))' is not supported (only chunked)")
            }
            state = .chunkSize
            awaitsContinue = expectsContinue
            return nil
        }
        guard let first = firstLength else {
            keepHead()
            return finish()
        }
        guard !lengthsDiffer, !first.isEmpty, first.utf8.count <= 12,
              first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(first) else {
            throw .bad("Content-Length '\(values(of: "content-length").joined(separator: ", "))' is not one decimal number")
        }
        guard length <= limits.maxBodyBytes else {
            throw HTTP1ParseError(status: 413, message: "the body (\(length) bytes) is larger than \(limits.maxBodyBytes) bytes")
        }
        keepHead()
        if length == 0 { return finish() }
        body.reserveCapacity(length)
        state = .body(remaining: length)
        awaitsContinue = expectsContinue
        return nil
    }

    /// Keeps the head just accepted, when it lies whole in this read, for the next request to be recognised by.
    private mutating func keepHead() {
        guard let input, let requestStart else { return }
        if keptHead == nil || !isKnownUniquelyReferenced(&keptHead) { keptHead = KeptHead() }
        keptHead!.keep(UnsafeRawBufferPointer(rebasing: input[requestStart..<position]), method: method,
                      target: target, minorVersion: minorVersion, headers: headers, headerBytes: headerBytes)
    }

    /// The kept head came again (`count` bytes, with these `Content-Length` digits): the request it makes, when it
    /// has no body; otherwise the body is read next.
    private mutating func request(repeating keptHead: KeptHead, count: Int, digits: UnsafeRawBufferPointer?) -> HTTP1Request? {
        method = keptHead.method
        target = keptHead.target.text
        minorVersion = keptHead.minorVersion
        headers.append(contentsOf: keptHead.headers)
        bytesInRequest = count
        repeatedHeads += 1
        // The strings remembered from the last head the machine stepped through stay remembered.
        swap(&strings, &previousStrings)
        repeatedHead = keptHead
        guard let digits, let field = keptHead.length?.field else { return finish() }
        var length = 0
        for digit in digits { length = length * 10 + Int(digit - 0x30) }
        if !headers[field].value.hasSameUTF8(as: digits) { headers[field].value = String(decoding: digits, as: UTF8.self) }
        if length == 0 { return finish() }
        body.reserveCapacity(length)
        state = .body(remaining: length)
        return nil
    }

    /// Every value of field `name`, in order: for the messages of refusals.
    private func values(of name: String) -> [String] {
        headers.filter { $0.name == name }.map(\.value)
    }

    /// An HTTP/1.1 request with `Expect: 100-continue` (RFC 9110 §10.1.1).
    private var expectsContinue: Bool {
        minorVersion == 1 && headers.contains { $0.name == "expect" && $0.value.lowercased() == "100-continue" }
    }

    private mutating func finish() -> HTTP1Request {
        let request = HTTP1Request(method: method, target: repeatedHead?.target ?? RequestTarget(target),
                                   minorVersion: minorVersion, headers: headers, body: body)
        repeatedHead = nil
        state = .method
        method = ""
        target = ""
        headers = []
        swap(&headers, &spareHeaders)
        body = []
        swap(&body, &spareBody)
        lineBytes = 0
        headerBytes = 0
        bytesInRequest = 0
        awaitsContinue = false
        swap(&previousStrings, &strings)
        strings.removeAll(keepingCapacity: true)
        return request
    }

    /// Takes back the arrays of `request`, which its session is done with, for the next request. Only modest ones
    /// are kept; one still held elsewhere is copied on the next write instead, which is only an allocation.
    mutating func recycle(_ request: inout HTTP1Request) {
        if spareHeaders.capacity == 0 && request.headers.capacity <= 64 {
            request.headers.removeAll(keepingCapacity: true)
            swap(&spareHeaders, &request.headers)
        }
        if spareBody.capacity == 0 && request.body.capacity <= 64 << 10 {
            request.body.removeAll(keepingCapacity: true)
            swap(&spareBody, &request.body)
        }
    }

    /// Drops what is kept to make the next request cheaper (spare arrays, the previous request's strings, the kept
    /// head).
    mutating func forgetRecycled() {
        spareHeaders = []
        spareBody = []
        previousStrings = []
        strings = []
        keptHead = nil
    }

    private mutating func take() -> String {
        defer { clearToken() }
        return withToken { parser, token in parser.string(token) }
    }

    // MARK: The token

    private var tokenIsEmpty: Bool { token.isEmpty && direct == nil }

    /// Adds a run of the input to the token: kept where it lies when it starts the token.
    private mutating func appendToken(_ run: UnsafeRawBufferPointer) {
        if tokenIsEmpty {
            direct = run
        } else {
            keepToken()
            token.append(contentsOf: run)
        }
    }

    /// Copies a token that lies in the input into `token`, before more is added or the input goes away.
    private mutating func keepToken() {
        guard let run = direct else { return }
        token.append(contentsOf: run)
        direct = nil
    }

    private mutating func withToken<Result>(_ body: (inout Self, UnsafeRawBufferPointer) -> Result) -> Result {
        if let run = direct { return body(&self, run) }
        let bytes = token
        return bytes.withUnsafeBytes { body(&self, $0) }
    }

    private mutating func clearToken() {
        direct = nil
        if !token.isEmpty { token.removeAll(keepingCapacity: true) }
    }

    /// `bytes` as a `String`: the previous request's string at the same place when it has the same bytes.
    private mutating func string(_ bytes: UnsafeRawBufferPointer) -> String {
        let place = strings.count
        var result: String
        if place < previousStrings.count, previousStrings[place].hasSameUTF8(as: bytes) {
            result = previousStrings[place]
        } else {
            result = String(decoding: bytes, as: UTF8.self)
        }
        if place < Self.maxRememberedStrings { strings.append(result) }
        return result
    }

    /// At most this many strings of a request are remembered for the next (a usual request has fewer).
    private static let maxRememberedStrings = 32

    private mutating func requestLineByte(_ count: Int = 1) throws(HTTP1ParseError) {
        lineBytes += count
        guard lineBytes <= limits.maxRequestLineBytes else {
            throw HTTP1ParseError(status: 414, message: "the request line is longer than \(limits.maxRequestLineBytes) bytes")
        }
    }

    private mutating func headerByte(_ count: Int = 1) throws(HTTP1ParseError) {
        headerBytes += count
        guard headerBytes <= limits.maxHeaderBytes else {
            throw HTTP1ParseError(status: 431, message: "the header fields are larger than \(limits.maxHeaderBytes) bytes")
        }
    }

    // MARK: Characters

    /// `tchar` of RFC 9110: the characters of methods and field names.
    static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5a, 0x61...0x7a: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2a, 0x2b, 0x2d, 0x2e, 0x5e, 0x5f, 0x60, 0x7c, 0x7e: true
        default: false
        }
    }

    static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte
    }

    static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case 0x30...0x39: Int(byte - 0x30)
        case 0x41...0x46: Int(byte - 0x41 + 10)
        case 0x61...0x66: Int(byte - 0x61 + 10)
        default: nil
        }
    }
}
