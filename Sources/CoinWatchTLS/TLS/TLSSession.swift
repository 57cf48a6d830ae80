/// One connection's TLS, as a byte-in, byte-out engine with no socket: the caller feeds it the peer's ciphertext,
/// reads plaintext out, writes plaintext in and drains ciphertext to send. That keeps every handshake on the
/// thread that owns the connection and never blocks it: a step that needs the peer's next bytes just returns.
///
/// Not thread-safe: a session belongs to one connection, used on its event loop.
///
/// A typical turn, when ciphertext arrives:
/// ```
/// try session.feed(bytes)
/// if try session.advanceHandshake() {                  // true once established
///     while case .bytes(let n) = try session.read(into: buffer) { deliver(buffer[..<n]) }
/// }
/// send(session.takeOutput())                           // handshake messages, alerts, encrypted replies
/// ```
public final class TLSSession {
    /// Bounds on what a session buffers, so a peer (or a caller that stops draining) cannot grow it without
    /// limit.
    public struct Limits: Hashable, Sendable {
        /// Ciphertext fed but not yet processed, and ciphertext produced but not yet drained, each.
        public var maximumBufferedCiphertext: Int
        /// Plaintext written before the handshake finished, held until it has.
        public var maximumBufferedPlaintext: Int

        public init(maximumBufferedCiphertext: Int = 256 * 1024, maximumBufferedPlaintext: Int = 256 * 1024) {
            self.maximumBufferedCiphertext = maximumBufferedCiphertext
            self.maximumBufferedPlaintext = maximumBufferedPlaintext
        }
    }

    /// Where the session is.
    public enum State: Hashable, Sendable {
        case handshaking
        case established
        /// The peer sent close_notify (this side answered with its own), or this side closed.
        case closed
        /// A fatal error; every further call throws it again.
        case failed
    }

    /// What a `read(into:)` found.
    public enum ReadResult: Hashable, Sendable {
        /// This many plaintext bytes were written at the start of the buffer.
        case bytes(Int)
        /// No plaintext until more ciphertext is fed (or the handshake still needs the peer).
        case needsInput
        /// The peer closed the session with close_notify: no more plaintext will come.
        case closed
    }

    public let context: TLSContext
    public let role: TLSConfiguration.Role
    public let limits: Limits
    /// A client's key for its resumable sessions (see `TLSContext.makeSession`).
    public let resumptionKey: String?
    public private(set) var state: State = .handshaking
    /// Set once the session failed.
    public private(set) var error: TLSError?
    /// Whether this side has sent its close_notify.
    private var sentCloseNotify = false
    /// Whether the peer has sent its close_notify.
    public private(set) var receivedCloseNotify = false
    /// Plaintext written during the handshake.
    private var pendingPlaintext: [UInt8] = []
    private var handles: OpenSSLTLS.SessionHandles!
    /// The most each memory BIO has held since it was last replaced (see `releaseIdleBuffers`).
    private var inputPeak = 0
    private var outputPeak = 0

    /// A memory BIO never gives memory back; one that has held more than this is replaced once it is empty, so
    /// a connection that once moved a large burst does not keep its buffer while idle.
    static let bufferRetentionLimit = 4 * 1024

    init(context: TLSContext, serverName: String?, resumptionKey: String?, limits: Limits) throws(TLSError) {
        self.context = context
        role = context.configuration.role
        self.limits = limits
        self.resumptionKey = resumptionKey
        handles = try OpenSSLTLS.makeSession(
            context.handles.context, role: role, serverName: serverName,
            verifiesHost: context.configuration.verifiesPeer, owner: Unmanaged.passUnretained(self).toOpaque())
        if let resumptionKey, let cache = context.clientSessions { cache.offer(for: resumptionKey, to: handles) }
    }

    deinit {
        OpenSSLTLS.freeSession(handles, resumable: state == .established || state == .closed)
    }

    // MARK: Ciphertext in

    /// Appends ciphertext received from the peer.
    ///
    /// - Throws: `TLSError` `.bufferLimitExceeded` if more than `limits.maximumBufferedCiphertext` would be
    ///   waiting (the caller fed without reading), or the session's earlier error.
    public func feed(_ ciphertext: UnsafeRawBufferPointer) throws(TLSError) {
        try checkUsable()
        let buffered = OpenSSLTLS.bufferedInput(handles) + ciphertext.count
        guard buffered <= limits.maximumBufferedCiphertext else {
            throw fail(TLSError(
                code: .bufferLimitExceeded,
                message: "\(buffered) bytes of ciphertext waiting, more than the \(limits.maximumBufferedCiphertext) allowed"))
        }
        guard OpenSSLTLS.feed(handles, ciphertext) else {
            throw fail(TLSError(code: .cryptoFailed, message: "cannot buffer received ciphertext"))
        }
        inputPeak = max(inputPeak, buffered)
    }

    /// `feed` for an array.
    public func feed(_ ciphertext: [UInt8]) throws(TLSError) {
        try withContiguousBytes(ciphertext) { (bytes) throws(TLSError) in try feed(bytes) }
    }

    /// The transport reached end of file. During the handshake that is a failure (`.peerClosed`); after it,
    /// without the peer's close_notify, the stream may have been cut (RFC 8446 §6.1), which a caller whose
    /// protocol frames its own messages can ignore.
    ///
    /// - Returns: whether the peer had closed cleanly with close_notify.
    @discardableResult
    public func inputEnded() throws(TLSError) -> Bool {
        switch state {
        case .handshaking:
            throw fail(TLSError(code: .peerClosed, message: "the peer closed the connection during the TLS handshake"))
        case .closed:
            return receivedCloseNotify
        case .failed:
            throw error!
        case .established:
            return false
        }
    }

    // MARK: The handshake

    /// Moves the handshake on with what has been fed; true once it is complete (and then at every call).
    /// Plaintext written meanwhile is encrypted as soon as it completes.
    ///
    /// - Throws: `TLSError`: `.certificateVerificationFailed` (with `certificateProblem`), `.handshakeFailed`,
    ///   `.protocolError` for bytes that are not TLS. The session may then still have an alert to send
    ///   (`pendingOutputCount`).
    @discardableResult
    public func advanceHandshake() throws(TLSError) -> Bool {
        switch state {
        case .established: return true
        case .closed: return isHandshakeComplete
        case .failed: throw error!
        case .handshaking: break
        }
        defer { releaseIdleBuffers() }
        switch OpenSSLTLS.handshake(handles, role: role) {
        case .done:
            state = .established
            isHandshakeComplete = true
            if !pendingPlaintext.isEmpty {
                let held = pendingPlaintext
                pendingPlaintext = []
                try write(held)
            }
            return true
        case .needsInput:
            return false
        case .closed:
            throw fail(TLSError(code: .peerClosed, message: "the peer closed the session during the TLS handshake"))
        case .failed(let failure):
            throw fail(failure)
        }
    }

    /// Whether the handshake completed (it stays true after the session closes; a session closed during its
    /// handshake never completed one).
    public private(set) var isHandshakeComplete = false

    // MARK: Plaintext out

    /// Decrypts into `buffer` as much as is available (at most one TLS record's worth per call; call again
    /// until `.needsInput`). Drives the handshake first if it is not complete.
    ///
    /// - Throws: `TLSError` as `advanceHandshake`, or `.protocolError` for a record that does not decrypt.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> ReadResult {
        if state == .closed { return .closed }
        guard try advanceHandshake() else { return .needsInput }
        defer { releaseIdleBuffers() }
        switch OpenSSLTLS.read(handles, into: buffer, role: role) {
        case .done(let count):
            return .bytes(count)
        case .needsInput:
            return .needsInput
        case .closed:
            // Answer the peer's close_notify with ours (RFC 8446 §6.1), then nothing more is sent.
            state = .closed
            receivedCloseNotify = true
            sendCloseNotify()
            return .closed
        case .failed(let failure):
            throw fail(failure)
        }
    }

    /// All plaintext available now (a convenience for tests and small protocols).
    public func readAvailable() throws(TLSError) -> [UInt8] {
        var plaintext = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            // `withUnsafeMutableBytes` rethrows untyped errors; carrying the outcome out keeps the type.
            let outcome = chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(TLSError) in try read(into: buffer) }
            }
            guard case .bytes(let count) = try outcome.get() else { return plaintext }
            plaintext += chunk[..<count]
        }
    }

    // MARK: Plaintext in

    /// Encrypts `plaintext` for the peer (drain it with `drainOutput`/`takeOutput`). During the handshake it is
    /// held, up to `limits.maximumBufferedPlaintext`, and encrypted once the handshake completes.
    ///
    /// - Throws: `TLSError` `.peerClosed` after the session closed, `.bufferLimitExceeded` past a bound, or the
    ///   session's earlier error.
    public func write(_ plaintext: UnsafeRawBufferPointer) throws(TLSError) {
        try checkUsable()
        guard plaintext.count > 0 else { return }
        switch state {
        case .handshaking:
            guard pendingPlaintext.count + plaintext.count <= limits.maximumBufferedPlaintext else {
                throw fail(TLSError(
                    code: .bufferLimitExceeded,
                    message: "more than \(limits.maximumBufferedPlaintext) bytes written before the TLS handshake finished"))
            }
            pendingPlaintext += plaintext
            return
        case .closed:
            throw TLSError(code: .peerClosed, message: "the TLS session is closed")
        case .established, .failed:
            break
        }
        let buffered = OpenSSLTLS.bufferedOutput(handles) + plaintext.count
        guard buffered <= limits.maximumBufferedCiphertext else {
            throw fail(TLSError(
                code: .bufferLimitExceeded,
                message: "\(buffered) bytes of ciphertext undrained, more than the \(limits.maximumBufferedCiphertext) allowed"))
        }
        switch OpenSSLTLS.write(handles, plaintext, role: role) {
        case .done:
            outputPeak = max(outputPeak, OpenSSLTLS.bufferedOutput(handles))
        case .closed:
            state = .closed
            throw TLSError(code: .peerClosed, message: "the peer closed the TLS session")
        case .needsInput:
            // Only a renegotiation could make a write wait for input, and renegotiation is off.
            throw fail(TLSError(code: .protocolError, message: "the TLS session wanted input to write"))
        case .failed(let failure):
            throw fail(failure)
        }
    }

    /// `write` for an array.
    public func write(_ plaintext: [UInt8]) throws(TLSError) {
        try withContiguousBytes(plaintext) { (bytes) throws(TLSError) in try write(bytes) }
    }

    // MARK: Ciphertext out

    /// Ciphertext waiting to be sent.
    public var pendingOutputCount: Int {
        OpenSSLTLS.bufferedOutput(handles)
    }

    /// Moves up to `buffer.count` bytes of ciphertext to send into `buffer`; returns how many.
    public func drainOutput(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = OpenSSLTLS.drainOutput(handles, into: buffer)
        releaseIdleBuffers()
        return count
    }

    /// All ciphertext waiting to be sent.
    public func takeOutput() -> [UInt8] {
        let count = pendingOutputCount
        guard count > 0 else { return [] }
        var output = [UInt8](repeating: 0, count: count)
        let drained = output.withUnsafeMutableBytes { drainOutput(into: $0) }
        return Array(output[..<drained])
    }

    // MARK: Closing

    /// Sends close_notify (drain it with the rest of the output); afterwards nothing more can be written. Does
    /// nothing once closed or failed.
    public func close() {
        guard state == .established || state == .handshaking else { return }
        if state == .established { sendCloseNotify() }
        state = .closed
    }

    private func sendCloseNotify() {
        guard !sentCloseNotify else { return }
        sentCloseNotify = true
        OpenSSLTLS.shutdown(handles)
        outputPeak = max(outputPeak, OpenSSLTLS.bufferedOutput(handles))
    }

    // MARK: What was negotiated

    /// The ALPN protocol the server chose (`h2`, `http/1.1`, `coinwatch`), nil when none was.
    public var applicationProtocol: String? {
        isHandshakeComplete ? OpenSSLTLS.selectedProtocol(handles) : nil
    }

    /// "TLSv1.2" or "TLSv1.3" once established.
    public var protocolVersion: String? {
        isHandshakeComplete ? OpenSSLTLS.protocolVersion(handles) : nil
    }

    /// Whether the handshake resumed an earlier session.
    public var isResumed: Bool {
        isHandshakeComplete && OpenSSLTLS.isResumed(handles)
    }

    /// The subject of the peer's verified certificate in RFC 2253 form (`CN=device-42,O=Example`): for a server
    /// asking for client certificates, who the client is; nil without a certificate.
    public var peerSubject: String? {
        isHandshakeComplete ? OpenSSLTLS.peerSubject(handles) : nil
    }

    // MARK: Internals

    private func checkUsable() throws(TLSError) {
        if let error { throw error }
    }

    /// Records `failure` as the session's end and returns it for throwing.
    private func fail(_ failure: TLSError) -> TLSError {
        if error == nil {
            error = failure
            state = .failed
        }
        return error!
    }

    /// Replaces an empty memory BIO that has grown beyond `bufferRetentionLimit` by a fresh one.
    private func releaseIdleBuffers() {
        if inputPeak > Self.bufferRetentionLimit, OpenSSLTLS.bufferedInput(handles) == 0 {
            OpenSSLTLS.replaceInput(&handles!)
            inputPeak = 0
        }
        if outputPeak > Self.bufferRetentionLimit, OpenSSLTLS.bufferedOutput(handles) == 0 {
            OpenSSLTLS.replaceOutput(&handles!)
            outputPeak = 0
        }
    }
}
