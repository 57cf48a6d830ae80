@testable import CoinWatchHTTP

/// libFuzzer target: the HTTP/1.1 request parser.
///
/// Input: one byte choosing a read size (low bits) and whether the split parse lets its spares go after every read
/// that delivered a request, as a session does when a request became a stream (high bit); then the byte stream a
/// client sends. The stream is parsed whole and in reads of that size: both must deliver the same requests, fields
/// and bodies, and end in the same error (the parser may not depend on how the stream was split, on whether it
/// recognised a repeated head, nor on what it kept between requests); every request must respect the limits;
/// every refusal must carry one of the statuses the parser answers with. A crash, a hang or a sanitizer report is
/// a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP1OneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let readSizes = [1, 2, 3, 5, 8, 64, 100, 512, 4096]
    let stream = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    var limits = HTTP1Parser.Limits()
    limits.maxRequestLineBytes = 256
    limits.maxHeaderBytes = 512
    limits.maxHeaderCount = 16
    limits.maxBodyBytes = 1024
    let whole = parse(stream, chunk: max(1, stream.count), limits: limits, forgetting: false)
    let split = parse(stream, chunk: readSizes[Int(data[0] & 0x7F) % readSizes.count], limits: limits,
                      forgetting: data[0] & 0x80 != 0)
    guard whole.summary == split.summary, whole.error == split.error else {
        fatalError("split reads changed the result: \(whole.summary) \(String(describing: whole.error)) vs "
                   + "\(split.summary) \(String(describing: split.error))")
    }
    if let error = whole.error, ![400, 413, 414, 431, 501, 505].contains(error.status) {
        fatalError("unexpected status \(error.status)")
    }
    return 0
}

private struct Outcome {
    var summary: [String] = []
    var error: HTTP1ParseError?
}

private func parse(_ stream: UnsafeRawBufferPointer, chunk: Int, limits: HTTP1Parser.Limits, forgetting: Bool) -> Outcome {
    var parser = HTTP1Parser(limits: limits)
    var outcome = Outcome()
    var requests: [HTTP1Request] = []
    var start = 0
    while start < stream.count && outcome.error == nil {
        let end = min(stream.count, start + chunk)
        do throws(HTTP1ParseError) {
            let delivered = requests.count
            try parser.parse(UnsafeRawBufferPointer(rebasing: stream[start..<end]), into: &requests)
            if forgetting && requests.count > delivered { parser.forgetRecycled() }
        } catch {
            outcome.error = error
        }
        start = end
    }
    for request in requests {
        guard request.body.count <= limits.maxBodyBytes, request.headers.count <= limits.maxHeaderCount,
              request.method.utf8.count + request.target.text.utf8.count <= limits.maxRequestLineBytes else {
            fatalError("a request beyond the limits was delivered: \(request.method) \(request.target.text)")
        }
        // Everything the request carries: a head recognised as the kept one (only when it lies whole in a read)
        // must read exactly as the state machine reads it byte by byte.
        outcome.summary.append("\(request.method) \(request.target.text) 1.\(request.minorVersion) "
            + request.headers.map { "\($0.name)=\($0.value)" }.joined(separator: "|") + " \(request.body)")
    }
    return outcome
}
