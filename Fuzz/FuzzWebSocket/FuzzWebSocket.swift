import CoinWatchFeeds

/// libFuzzer target: the WebSocket client — the opening handshake's answer, the frame parser and the client state
/// machine above it — fed bytes as a hostile server would send them.
///
/// Input: a mode byte, then the server's bytes. The mode's low bit chooses whether the stream starts after a valid
/// `101` answer (to reach the frame parser at once) or with the handshake itself; the next bits pick a small message
/// limit (so inputs reach it) and a read size. Each input is run twice, once whole and once in reads of that size:
///
/// - the events (opened, messages with their bytes, pings, pongs, the close) and the failure must not depend on
///   the split;
/// - a text message delivered is UTF-8;
/// - nothing is delivered after a failure or a close; a failure that belongs to an open connection leaves exactly
///   one close frame (with its code) to send, and every frame the client sends is masked and well formed;
/// - the buffered bytes never exceed the message limit plus one control frame and a header.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let mode = data[0]
    let maxMessage = [16, 125, 1024, 65_536][Int(mode >> 1) & 3]
    let readSize = [1, 2, 3, 7, 64, 4096][Int(mode >> 3) % 6]
    var stream: [UInt8] = mode & 1 == 0 ? upgrade : []
    stream += UnsafeBufferPointer(start: data + 1, count: size - 1)
    let whole = run(stream, maxMessage: maxMessage, readSize: .max)
    let split = run(stream, maxMessage: maxMessage, readSize: readSize)
    guard whole == split else {
        fatalError("the events depend on the split:\nwhole \(whole)\nsplit (\(readSize)) \(split)")
    }
    return 0
}

/// A fixed stand-in for SHA-1: the handshake's checks are exercised with it on both sides.
private func digest(_ bytes: [UInt8]) -> [UInt8] {
    var state = [UInt8](repeating: 0x5A, count: 20)
    for (index, byte) in bytes.enumerated() { state[index % 20] = state[index % 20] &* 31 &+ byte }
    return state
}

private let keyBytes: [UInt8] = Array(1...16)
private let url = WebSocketURL(isSecure: false, host: "fuzz.test", port: 80, target: "/ws")

/// The valid `101` answer to the client's request.
private let upgrade: [UInt8] = {
    let accept = WebSocketHandshake.accept(forKey: WebSocketHandshake(url: url, keyBytes: keyBytes, sha1: digest).key,
                                           sha1: digest)
    return Array(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Accept: \(accept)\r\n\r\n").utf8)
}()

private struct Outcome: Equatable, CustomStringConvertible {
    var events: [String] = []
    var failure: String?
    var sentFrames: [[UInt8]] = []

    var description: String { "\(events) failure=\(failure ?? "-") sent=\(sentFrames.count)" }
}

private func run(_ stream: [UInt8], maxMessage: Int, readSize: Int) -> Outcome {
    var client = WebSocketClient(
        url: url, configuration: .init(maxMessageBytes: maxMessage), keyBytes: keyBytes, sha1: digest,
        maskKeys: { 0x1234_5678 })
    client.start()
    _ = client.takeOutput()
    var outcome = Outcome()
    var offset = 0
    var ended = false
    while offset < stream.count {
        let end = min(stream.count, offset + max(1, min(readSize, stream.count)))
        let part = Array(stream[offset..<end])
        offset = end
        part.withUnsafeBytes { raw in
            do throws(WebSocketError) {
                try client.receive(raw) { event in
                    if ended { fatalError("an event after the end: \(event)") }
                    switch event {
                    case .opened: outcome.events.append("opened")
                    case .text(let bytes):
                        guard String(validating: bytes, as: UTF8.self) != nil else {
                            fatalError("text that is not UTF-8")
                        }
                        outcome.events.append("text \(Array(bytes))")
                    case .binary(let bytes): outcome.events.append("binary \(Array(bytes))")
                    case .ping: outcome.events.append("ping")
                    case .pong: outcome.events.append("pong")
                    case .closed(let code, let reason):
                        outcome.events.append("closed \(code.map(String.init) ?? "-") \(reason)")
                        ended = true
                    }
                }
            } catch {
                if outcome.failure != nil { fatalError("a second failure: \(error)") }
                outcome.failure = "\(error.code) \(error.closeCode.map(String.init) ?? "-")"
                ended = true
            }
        }
        guard client.bufferedBytes <= maxMessage + 125 + 14 else {
            fatalError("\(client.bufferedBytes) bytes buffered with a limit of \(maxMessage)")
        }
        outcome.sentFrames += frames(client.takeOutput())
        if ended { break }
    }
    if let failure = outcome.failure, failure.hasSuffix(" -") == false, outcome.events.contains("opened") {
        guard outcome.sentFrames.last?.first == 0x88 else { fatalError("a failure without its close frame: \(failure)") }
    }
    return outcome
}

/// The client's frames: each must be final, masked and exactly as long as it says.
private func frames(_ bytes: [UInt8]) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var index = 0
    while index < bytes.count {
        guard bytes.count - index >= 6, bytes[index] & 0x80 != 0, bytes[index + 1] & 0x80 != 0 else {
            fatalError("a client frame that is not final and masked: \(Array(bytes[index...].prefix(16)))")
        }
        var length = Int(bytes[index + 1] & 0x7F)
        var header = 2
        if length == 126 {
            length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            header = 4
        } else if length == 127 {
            length = 0
            for offset in 2..<10 { length = length << 8 | Int(bytes[index + offset]) }
            header = 10
        }
        let end = index + header + 4 + length
        guard end <= bytes.count else { fatalError("a truncated client frame") }
        result.append(Array(bytes[index..<end]))
        index = end
    }
    return result
}
