/// An RFC 6455 client connection as a state machine: bytes from the server in, events and bytes for the server out.
///
/// It does no I/O and keeps no clock, so the owner decides where it runs (an event loop: nothing here blocks) and
/// tests drive it byte by byte. After each call the owner sends `takeOutput()` and, when `shouldCloseTransport` is
/// set, closes the socket once that output is written.
///
/// - Handshake: `start()` queues the upgrade request; the answer is checked by `WebSocketHandshake`.
/// - Frames: every frame sent is masked with a fresh key; pings are answered with a pong carrying the same payload;
///   pongs are reported (they prove the connection is alive).
/// - Closing: a close frame from the server is answered with one echoing its code, then the transport closes. A
///   local `close(code:reason:)` sends a close frame and waits for the server's (the owner bounds the wait). A
///   protocol violation, text that is not UTF-8 or a message over the limit sends the matching close code (1002,
///   1007, 1009) and closes at once, without reading further.
public struct WebSocketClient: Sendable {
    public struct Configuration: Sendable {
        /// Largest message accepted; a longer one closes the connection with 1009.
        public var maxMessageBytes = 1 << 20
        /// Extra headers of the upgrade request.
        public var headers: [(String, String)] = []

        public init(maxMessageBytes: Int = 1 << 20, headers: [(String, String)] = []) {
            self.maxMessageBytes = maxMessageBytes
            self.headers = headers
        }
    }

    /// What the server did.
    public enum Event {
        /// The upgrade succeeded: messages may be sent.
        case opened
        /// A text message, checked to be UTF-8: its bytes, valid only during the call (like a binary message's),
        /// so a reader takes what it needs without a `String` of the whole message.
        case text(UnsafeRawBufferPointer)
        /// A binary message.
        case binary(UnsafeRawBufferPointer)
        /// A ping (already answered).
        case ping
        /// A pong: the answer to our ping.
        case pong
        /// The close handshake finished, or the server closed first (its code, if any, and reason).
        case closed(code: UInt16?, reason: String)
    }

    public enum State: Sendable, Hashable {
        case idle, handshaking, open
        /// We sent a close frame and wait for the server's.
        case closeSent
        case closed
    }

    public private(set) var state = State.idle
    /// Set once the socket should be closed after the pending output is written.
    public private(set) var shouldCloseTransport = false
    private var handshake: WebSocketHandshake
    private var parser: WebSocketFrameParser
    private var output: [UInt8] = []
    private let maskKeys: @Sendable () -> UInt32

    /// - Parameters:
    ///   - keyBytes: 16 bytes from a secure random source, for `Sec-WebSocket-Key`.
    ///   - sha1: SHA-1, to check `Sec-WebSocket-Accept`.
    ///   - maskKeys: a fresh unpredictable masking key per call (the default draws from the system's secure
    ///     generator).
    public init(
        url: WebSocketURL, configuration: Configuration = Configuration(), keyBytes: [UInt8],
        sha1: ([UInt8]) -> [UInt8], maskKeys: @escaping @Sendable () -> UInt32 = WebSocketClient.secureMaskKey
    ) {
        handshake = WebSocketHandshake(url: url, keyBytes: keyBytes, headers: configuration.headers, sha1: sha1)
        parser = WebSocketFrameParser(maxMessageBytes: configuration.maxMessageBytes)
        self.maskKeys = maskKeys
    }

    /// A masking key from the system's secure generator (`getrandom(2)` on Linux).
    @Sendable public static func secureMaskKey() -> UInt32 {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    /// 16 key bytes from the system's secure generator.
    public static func secureKeyBytes() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in generator.next() }
    }

    /// Bytes held for unfinished frames: bounded by the message limit.
    public var bufferedBytes: Int { parser.bufferedBytes }

    /// Queues the upgrade request.
    public mutating func start() {
        guard state == .idle else { return }
        state = .handshaking
        output.append(contentsOf: handshake.request)
    }

    /// The bytes to send now; empties the queue.
    public mutating func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    public var hasOutput: Bool { !output.isEmpty }

    /// Feeds bytes from the server, reporting what they amount to.
    ///
    /// - Throws: a failed handshake or a violation; the matching close frame (if any) is queued and the transport
    ///   is to be closed. Nothing more is delivered after an error or after the close handshake.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, _ handle: (Event) -> Void) throws(WebSocketError) {
        switch state {
        case .idle, .closed:
            return
        case .handshaking:
            let progress: WebSocketHandshake.Progress
            do {
                progress = try handshake.receive(bytes)
            } catch {
                state = .closed
                shouldCloseTransport = true
                throw error
            }
            guard case .upgraded(let remainder) = progress else { return }
            state = .open
            handle(.opened)
            if !remainder.isEmpty {
                var failure: WebSocketError?
                remainder.withUnsafeBytes { rest in
                    do throws(WebSocketError) {
                        try receiveFrames(rest, handle)
                    } catch {
                        failure = error
                    }
                }
                if let failure { throw failure }
            }
        case .open, .closeSent:
            try receiveFrames(bytes, handle)
        }
    }

    private mutating func receiveFrames(
        _ bytes: UnsafeRawBufferPointer, _ handle: (Event) -> Void
    ) throws(WebSocketError) {
        var failure: WebSocketError?
        do {
            try parser.parse(bytes) { event in
                guard failure == nil, state == .open || state == .closeSent else { return }
                switch event {
                case .message(.text, let payload):
                    guard WebSocketText.isUTF8(payload) else {
                        failure = WebSocketError(
                            code: .invalidText, message: "a text message that is not UTF-8",
                            closeCode: WebSocketCloseCode.invalidPayload)
                        return
                    }
                    handle(.text(payload))
                case .message(_, let payload):
                    handle(.binary(payload))
                case .ping(let payload):
                    if state == .open {
                        WebSocketFrameWriter.append(.pong, payload: payload, maskKey: maskKeys(), to: &output)
                    }
                    handle(.ping)
                case .pong:
                    handle(.pong)
                case .close(let code, let reason):
                    if state == .open {
                        // Echo the code (§5.5.1); a close without one is answered with an empty close.
                        let payload = code.map { WebSocketFrameWriter.closePayload(code: $0, reason: "") } ?? []
                        WebSocketFrameWriter.append(.close, payload: payload, maskKey: maskKeys(), to: &output)
                    }
                    state = .closed
                    shouldCloseTransport = true
                    handle(.closed(code: code, reason: reason))
                }
            }
        } catch {
            // The first violation wins: a message refused by the handler (text that is not UTF-8) came before
            // whatever the parser then found in the bytes after it.
            if failure == nil { failure = error }
        }
        if let failure {
            fail(failure)
            throw failure
        }
    }

    /// Sends the error's close code (when the connection is open) and gives up on the connection.
    private mutating func fail(_ error: WebSocketError) {
        if state == .open, let code = error.closeCode {
            let payload = WebSocketFrameWriter.closePayload(code: code, reason: error.code.name)
            WebSocketFrameWriter.append(.close, payload: payload, maskKey: maskKeys(), to: &output)
        }
        state = .closed
        shouldCloseTransport = true
    }

    /// Queues a text message. Ignored unless open.
    public mutating func send(text: String) {
        guard state == .open else { return }
        WebSocketFrameWriter.append(.text, payload: text.utf8, maskKey: maskKeys(), to: &output)
    }

    /// Queues a ping (payload cut to 125 bytes). Ignored unless open.
    public mutating func sendPing(_ payload: [UInt8] = []) {
        guard state == .open else { return }
        WebSocketFrameWriter.append(
            .ping, payload: payload.prefix(WebSocketFrameWriter.maxControlPayload), maskKey: maskKeys(), to: &output)
    }

    /// Starts the close handshake: queues a close frame and waits for the server's. Before the upgrade finished,
    /// or after an error, just closes the transport.
    public mutating func close(code: UInt16 = WebSocketCloseCode.normal, reason: String = "") {
        switch state {
        case .open:
            WebSocketFrameWriter.append(
                .close, payload: WebSocketFrameWriter.closePayload(code: code, reason: reason), maskKey: maskKeys(),
                to: &output)
            state = .closeSent
        case .idle, .handshaking:
            state = .closed
            shouldCloseTransport = true
        case .closeSent, .closed:
            break
        }
    }

    /// Refuses a message of a kind the endpoint does not take: closes with `code` (1003 for a binary frame from a
    /// JSON venue) at once, like a protocol error.
    public mutating func fail(code: UInt16, reason: String) {
        fail(WebSocketError(code: .unsupportedData, message: reason, closeCode: code))
    }
}
