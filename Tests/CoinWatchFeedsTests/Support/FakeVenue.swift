@testable import CoinWatchFeeds

/// An in-memory venue for `VenueSource` tests: the dialer hands out transports whose output the test reads (as
/// a server would) and into which it writes server bytes.
final class FakeDialer: FeedDialer {
    var transports: [FakeTransport] = []
    /// What the next dial does: succeed (default) or fail.
    var nextFailure: FeedDialError?
    var dialedURLs: [WebSocketURL] = []
    /// Dials left unanswered (to test handshake timeouts). Only their completions are kept, as a dial in progress
    /// keeps them: holding the delegate too would make a cycle with the source that holds this dialer.
    var holdDials = false
    private var held: [(Result<any FeedTransport, FeedDialError>) -> Void] = []

    func dial(
        _ url: WebSocketURL, delegate: any FeedTransportDelegate,
        completion: @escaping (Result<any FeedTransport, FeedDialError>) -> Void
    ) {
        dialedURLs.append(url)
        if let failure = nextFailure {
            nextFailure = nil
            completion(.failure(failure))
            return
        }
        if holdDials {
            held.append(completion)
            return
        }
        let transport = FakeTransport(delegate: delegate)
        transports.append(transport)
        completion(.success(transport))
    }

    var current: FakeTransport? { transports.last }
}

final class FakeTransport: FeedTransport {
    weak var delegate: (any FeedTransportDelegate)?
    /// Everything the client sent.
    var sent: [UInt8] = []
    var closed = false
    var closedAfterFlush: Bool?

    init(delegate: any FeedTransportDelegate) {
        self.delegate = delegate
    }

    func send(_ bytes: [UInt8]) {
        guard !closed else { return }
        sent += bytes
    }

    func close(afterFlush: Bool) {
        guard !closed else { return }
        closed = true
        closedAfterFlush = afterFlush
        delegate?.transport(self, closedWith: nil)
    }

    /// The server sends bytes, read in one go.
    func deliver(_ bytes: [UInt8]) {
        deliver(reads: [bytes])
    }

    /// The server sends bytes that the loop reads in several pieces at one readiness (one `received` call each),
    /// then reports the end of the batch.
    func deliver(reads: [[UInt8]]) {
        for bytes in reads {
            guard !closed else { return }
            bytes.withUnsafeBytes { delegate?.transport(self, received: $0) }
        }
        guard !closed else { return }
        delegate?.transportReadFinished(self)
    }

    /// The server resets the connection.
    func reset() {
        guard !closed else { return }
        closed = true
        delegate?.transport(self, closedWith: "connection reset by peer")
    }

    /// The client's frames after the upgrade request.
    var clientFrames: [ServerFrames.ClientFrame] {
        guard let end = requestEnd else { return [] }
        return ServerFrames.clientFrames(Array(sent[end...])) ?? []
    }

    /// The client's text messages.
    var texts: [String] {
        clientFrames.filter { $0.opcode == 1 }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    /// The upgrade request.
    var request: String? {
        requestEnd.map { String(decoding: sent[..<$0], as: UTF8.self) }
    }

    private var requestEnd: Int? {
        guard sent.count >= 4 else { return nil }
        for index in 0...(sent.count - 4) where sent[index] == 13 && sent[index + 1] == 10 && sent[index + 2] == 13
            && sent[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// The 101 answer to the request this transport carried.
    func upgrade() {
        guard let request, let line = request.split(separator: "\r\n").first(where: { $0.hasPrefix("Sec-WebSocket-Key: ") })
        else { return }
        let key = String(line.dropFirst("Sec-WebSocket-Key: ".count))
        let accept = WebSocketHandshake.accept(forKey: key, sha1: ServerFrames.fakeDigest)
        deliver(Array(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept)\r\n\r\n").utf8))
    }
}
