import CNATS
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One connection to a NATS system (nats.c's `natsConnection`), with the options CoinWatch needs: several
/// servers, reconnecting for ever, credentials and TLS, and fast detection of a dead server.
///
/// nats.c runs threads of its own (a reader, a flusher, one for connection events, one per asynchronous
/// subscription). CoinWatch registers only connection-event callbacks, and each of them does nothing but
/// record the event in an atomic and hand it to `onEvent`, which must itself only queue it: the C contract is
/// "Such callback is invoked from a dedicated thread and the state of the connection that triggered the event
/// may have changed since that event was generated" (`natsConnectionHandler`, nats.h). Messages are read from
/// synchronous subscriptions (`NATSSubscription.next`) on CoinWatch's own threads, so no message callback ever
/// runs CoinWatch code on a library thread.
///
/// nats.c's connection is thread-safe ("natsConnection … can be shared by threads"): publishes may come from
/// several threads at once.
package final class NATSConnection: @unchecked Sendable {
    // @unchecked Sendable: `handle` is immutable after init and nats.c's connection object is thread-safe; the
    // event box is immutable apart from its atomics.

    package struct Options: Sendable {
        /// `nats://HOST:PORT` URLs (or `tls://…`); the library connects to one and learns the others.
        var servers: [String]
        /// The connection's name as servers show it (`connz`).
        package var name = "coinwatchd"
        var user: String?
        var password: String?
        var token: String?
        /// A `.creds` file (JWT and NKey seed) for decentralised auth.
        var credentialsFile: String?
        /// PEM file of the CAs that sign the servers' certificates (turns TLS on).
        var caFile: String?
        /// Client certificate and key (PEM) for mutual TLS.
        var certificateFile: String?
        var keyFile: String?
        /// How long a connect attempt may take.
        var connectTimeoutMs: Int64 = 2_000
        /// Time between reconnect attempts to the same server.
        var reconnectWaitMs: Int64 = 250
        /// Pings and the pings that may go unanswered: a server that stopped answering is given up after about
        /// interval × (outstanding + 1).
        package var pingIntervalMs: Int64 = 1_000
        var maxPingsOut: Int32 = 2

        package init(servers: [String]) {
            self.servers = servers
        }
    }

    /// What the connection reports on its own, from nats.c's event thread.
    package enum Event: Sendable {
        case disconnected
        case reconnected(url: String)
        case closed
        case asyncError(String)
    }

    enum State: UInt8, Sendable, CustomStringConvertible {
        case connecting = 0
        case connected
        case reconnecting
        case disconnected
        case closed

        var description: String {
            switch self {
            case .connecting: "connecting"
            case .connected: "connected"
            case .reconnecting: "reconnecting"
            case .disconnected: "disconnected"
            case .closed: "closed"
            }
        }
    }

    /// What the C callbacks reach through their `closure` pointer.
    final class EventBox: Sendable {
        let onEvent: @Sendable (Event) -> Void
        let reconnects = Atomic<Int>(0)
        let disconnects = Atomic<Int>(0)

        init(onEvent: @escaping @Sendable (Event) -> Void) {
            self.onEvent = onEvent
        }
    }

    let handle: OpaquePointer
    let options: Options
    let events: EventBox
    private let closed = Atomic<Bool>(false)

    /// Connects to one of `options.servers`, or throws `unavailable` with the library's words.
    ///
    /// Blocks the calling thread for up to the connect timeout per server: call it from a start-up or cluster
    /// thread, never from an event loop.
    package init(options: Options, onEvent: @escaping @Sendable (Event) -> Void) throws(ClusterError) {
        self.options = options
        let box = EventBox(onEvent: onEvent)
        events = box
        var opts: OpaquePointer?
        try Self.check(natsOptions_Create(&opts), "creating the NATS options")
        guard let opts else { throw ClusterError(code: .failed, message: "natsOptions_Create returned nothing") }
        defer { natsOptions_Destroy(opts) }
        try Self.configure(opts, options)
        // The box lives as long as the process may run callbacks for this connection. nats.c gives no point after
        // which its event thread is certain not to call back ("the closed callback may be invoked after
        // natsConnection_Destroy() returns"), so the box (a few bytes per connection) is never released.
        let closure = Unmanaged.passRetained(box).toOpaque()
        try Self.check(natsOptions_SetDisconnectedCB(opts, { _, closure in
            guard let closure else { return }
            let box = Unmanaged<EventBox>.fromOpaque(closure).takeUnretainedValue()
            box.disconnects.add(1, ordering: .relaxed)
            box.onEvent(.disconnected)
        }, closure), "setting the disconnected callback")
        try Self.check(natsOptions_SetReconnectedCB(opts, { connection, closure in
            guard let closure else { return }
            let box = Unmanaged<EventBox>.fromOpaque(closure).takeUnretainedValue()
            box.reconnects.add(1, ordering: .relaxed)
            box.onEvent(.reconnected(url: NATSConnection.connectedURL(connection)))
        }, closure), "setting the reconnected callback")
        try Self.check(natsOptions_SetClosedCB(opts, { _, closure in
            guard let closure else { return }
            Unmanaged<EventBox>.fromOpaque(closure).takeUnretainedValue().onEvent(.closed)
        }, closure), "setting the closed callback")
        try Self.check(natsOptions_SetErrorHandler(opts, { _, _, status, closure in
            guard let closure else { return }
            let text = String(cString: natsStatus_GetText(status))
            Unmanaged<EventBox>.fromOpaque(closure).takeUnretainedValue().onEvent(.asyncError(text))
        }, closure), "setting the error handler")
        var connection: OpaquePointer?
        let status = natsConnection_Connect(&connection, opts)
        guard status == NATS_OK, let connection else {
            throw ClusterError(
                code: .unavailable,
                message: "cannot connect to \(options.servers.map(Self.redacted).joined(separator: ",")): \(Self.describe(status))")
        }
        handle = connection
    }

    deinit {
        close()
        natsConnection_Destroy(handle)
    }

    private static func configure(_ opts: OpaquePointer, _ options: Options) throws(ClusterError) {
        guard !options.servers.isEmpty else {
            throw ClusterError(code: .invalidArgument, message: "no NATS server given")
        }
        try withCStrings(options.servers) { (pointers, count) throws(ClusterError) in
            try check(natsOptions_SetServers(opts, pointers, count), "setting the NATS servers")
        }
        try check(natsOptions_SetName(opts, options.name), "setting the connection name")
        // Reconnect for ever, to every server of the list and every one the cluster announces.
        try check(natsOptions_SetMaxReconnect(opts, -1), "setting the reconnect limit")
        try check(natsOptions_SetReconnectWait(opts, options.reconnectWaitMs), "setting the reconnect wait")
        try check(natsOptions_SetTimeout(opts, options.connectTimeoutMs), "setting the connect timeout")
        try check(natsOptions_SetPingInterval(opts, options.pingIntervalMs), "setting the ping interval")
        try check(natsOptions_SetMaxPingsOut(opts, options.maxPingsOut), "setting the pings out")
        if let user = options.user {
            try check(natsOptions_SetUserInfo(opts, user, options.password ?? ""), "setting the NATS user")
        }
        if let token = options.token {
            try check(natsOptions_SetToken(opts, token), "setting the NATS token")
        }
        if let credentials = options.credentialsFile {
            // The library reads the file only when it connects, and then reports only that no server was
            // available: a file that cannot be read is named here instead.
            if access(credentials, R_OK) != 0 {
                let reason = String(cString: strerror(errno))
                throw ClusterError(
                    code: .invalidArgument, message: "cannot read the NATS credentials file \(credentials): \(reason)")
            }
            try check(
                natsOptions_SetUserCredentialsFromFiles(opts, credentials, nil), "reading the credentials \(credentials)")
        }
        if options.caFile != nil || options.certificateFile != nil {
            try check(natsOptions_SetSecure(opts, true), "turning TLS on")
        }
        if let caFile = options.caFile {
            try check(natsOptions_LoadCATrustedCertificates(opts, caFile), "reading the CA file \(caFile)")
        }
        if let certificate = options.certificateFile {
            guard let key = options.keyFile else {
                throw ClusterError(code: .invalidArgument, message: "a NATS client certificate needs its key file")
            }
            try check(natsOptions_LoadCertificatesChain(opts, certificate, key), "reading \(certificate) and \(key)")
        }
    }

    // MARK: State

    var state: State {
        if closed.load(ordering: .relaxed) { return .closed }
        switch natsConnection_Status(handle) {
        case NATS_CONN_STATUS_CONNECTED: return .connected
        case NATS_CONN_STATUS_CONNECTING: return .connecting
        case NATS_CONN_STATUS_RECONNECTING: return .reconnecting
        case NATS_CONN_STATUS_CLOSED: return .closed
        default: return .disconnected
        }
    }

    /// The server this connection is attached to now (empty while it is not).
    var connectedURL: String {
        Self.connectedURL(handle)
    }

    fileprivate static func connectedURL(_ connection: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard natsConnection_GetConnectedUrl(connection, &buffer, buffer.count) == NATS_OK else { return "" }
        return redacted(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// `url` without the user and password it may carry (`nats://user:secret@host:4222` → `nats://host:4222`):
    /// nats.c accepts them in a server URL and reports the connected URL as given, and what is logged or shown
    /// (Health's `nats_server`, errors) must not hold a secret.
    package static func redacted(_ url: String) -> String {
        let bytes = Array(url.utf8)
        let separator = Array("://".utf8)
        guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return url }
        let authority = (start + separator.count)...
        let end = bytes[authority].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
        guard let at = bytes[(start + separator.count)..<end].lastIndex(of: UInt8(ascii: "@")) else { return url }
        return String(decoding: bytes[..<(start + separator.count)] + bytes[(at + 1)...], as: UTF8.self)
    }

    // MARK: Core NATS

    /// Publishes `data` on `subject` (core NATS: no acknowledgement). Buffered by the library and sent by its
    /// flusher thread; while reconnecting it is kept in the reconnect buffer.
    package func publish(_ subject: String, _ data: [UInt8]) throws(ClusterError) {
        let status = data.withUnsafeBytes { bytes in
            natsConnection_Publish(handle, subject, bytes.baseAddress, Int32(bytes.count))
        }
        try Self.check(status, "publishing on \(subject)")
    }

    /// Waits until the server has processed everything published so far (a PING/PONG round trip).
    package func flush(timeoutMs: Int64) throws(ClusterError) {
        try Self.check(natsConnection_FlushTimeout(handle, timeoutMs), "flushing")
    }

    /// A synchronous subscription: messages wait in the library's queue until `next` takes them.
    package func subscribe(_ subject: String) throws(ClusterError) -> NATSSubscription {
        var subscription: OpaquePointer?
        try Self.check(natsConnection_SubscribeSync(&subscription, handle, subject), "subscribing to \(subject)")
        guard let subscription else { throw ClusterError(code: .failed, message: "no subscription for \(subject)") }
        // Pending limits: nats.c drops messages past them (and reports a slow consumer); a price burst must
        // not be dropped before the bus thread takes it, so they are generous and bound memory still.
        _ = natsSubscription_SetPendingLimits(subscription, 1_000_000, 256 * 1024 * 1024)
        return NATSSubscription(handle: subscription)
    }

    /// Closes the connection (idempotent); subscriptions stop delivering, blocking calls return `closed`.
    package func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        natsConnection_Close(handle)
    }

    // MARK: Status codes

    static func check(_ status: natsStatus, _ what: @autoclosure () -> String) throws(ClusterError) {
        guard status != NATS_OK else { return }
        throw error(status, what())
    }

    static func error(_ status: natsStatus, _ what: String) -> ClusterError {
        let code: ClusterError.Code
        switch status {
        case NATS_TIMEOUT: code = .timeout
        case NATS_NOT_FOUND: code = .notFound
        case NATS_INVALID_ARG, NATS_INVALID_SUBJECT: code = .invalidArgument
        case NATS_CONNECTION_CLOSED, NATS_INVALID_SUBSCRIPTION, NATS_ILLEGAL_STATE: code = .closed
        case NATS_NO_SERVER, NATS_CONNECTION_DISCONNECTED, NATS_NO_RESPONDERS, NATS_STALE_CONNECTION: code = .unavailable
        default: code = .failed
        }
        return ClusterError(code: code, message: "\(what): \(describe(status))")
    }

    /// The status's text, with the library's last error of this thread when it says more.
    static func describe(_ status: natsStatus) -> String {
        let text = String(cString: natsStatus_GetText(status))
        var last = NATS_OK
        if let detail = nats_GetLastError(&last) {
            let detailText = String(cString: detail)
            if !detailText.isEmpty && detailText != text { return "\(text) (\(detailText))" }
        }
        return text
    }
}

/// A synchronous subscription: the library queues messages (up to its pending limits), one CoinWatch thread takes
/// them with `next`. nats.c: "natsSubscription_NextMsg … If the value is zero, then this call will not wait and
/// return the next message that was pending in the client, and NATS_TIMEOUT otherwise".
package final class NATSSubscription: @unchecked Sendable {
    // @unchecked Sendable: used by one thread at a time (`next`), `close` from any; nats.c's subscription is
    // thread-safe for unsubscribe.
    let handle: OpaquePointer
    private let closed = Atomic<Bool>(false)

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        close()
        natsSubscription_Destroy(handle)
    }

    /// The next message, or nil when none came within `timeoutMs` (0: only one already queued).
    package func next(timeoutMs: Int64, jetStream: Bool = false) throws(ClusterError) -> NATSMessage? {
        var message: OpaquePointer?
        let status = natsSubscription_NextMsg(&message, handle, timeoutMs)
        if status == NATS_TIMEOUT { return nil }
        try NATSConnection.check(status, "reading a message")
        guard let message else { return nil }
        defer { natsMsg_Destroy(message) }
        return NATSMessage(message, jetStream: jetStream)
    }

    /// Messages queued in the library for this subscription.
    var pending: Int {
        var messages: Int32 = 0
        var bytes: Int32 = 0
        guard natsSubscription_GetPending(handle, &messages, &bytes) == NATS_OK else { return 0 }
        return Int(messages)
    }

    /// Messages the library dropped for this subscription (past its pending limits).
    package var dropped: Int64 {
        var count: Int64 = 0
        _ = natsSubscription_GetDropped(handle, &count)
        return count
    }

    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        _ = natsSubscription_Unsubscribe(handle)
    }
}

/// A message copied out of the library (the C message is destroyed at once).
package struct NATSMessage: Sendable {
    var subject: String
    var data: [UInt8]
    /// For a JetStream message: its stream sequence and how many more the consumer has after it.
    var streamSequence: UInt64 = 0
    var pending: UInt64 = 0
    /// The bus's hand-off stamp (`ClusterLayout.sentHeader`), when the message carries one.
    var sentMs: Int64?
    /// Messages of the same bus batch that follow this one (`ClusterLayout.batchLeftHeader`; 0 without it).
    var batchLeft = 0

    init(subject: String, data: [UInt8], streamSequence: UInt64 = 0, pending: UInt64 = 0) {
        self.subject = subject
        self.data = data
        self.streamSequence = streamSequence
        self.pending = pending
    }

    fileprivate init(_ message: OpaquePointer, jetStream: Bool) {
        subject = String(cString: natsMsg_GetSubject(message))
        let length = Int(natsMsg_GetDataLength(message))
        if length > 0, let bytes = natsMsg_GetData(message) {
            data = [UInt8](UnsafeRawBufferPointer(start: bytes, count: length))
        } else {
            data = []
        }
        var stamp: UnsafePointer<CChar>?
        if natsMsgHeader_Get(message, ClusterLayout.sentHeader, &stamp) == NATS_OK, let stamp {
            sentMs = Int64(String(cString: stamp))
        }
        var left: UnsafePointer<CChar>?
        if natsMsgHeader_Get(message, ClusterLayout.batchLeftHeader, &left) == NATS_OK, let left {
            batchLeft = max(0, Int(String(cString: left)) ?? 0)
        }
        if jetStream {
            var meta: UnsafeMutablePointer<jsMsgMetaData>?
            if natsMsg_GetMetaData(&meta, message) == NATS_OK, let meta {
                streamSequence = meta.pointee.Sequence.Stream
                pending = meta.pointee.NumPending
                jsMsgMetaData_Destroy(meta)
            }
        }
    }
}

/// Calls `body` with `strings` as an array of C strings that live for the call.
func withCStrings<R, E: Error>(
    _ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, Int32) throws(E) -> R
) throws(E) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var pointers = copies.map { UnsafePointer<CChar>($0) }
    return try pointers.withUnsafeMutableBufferPointer { (buffer) throws(E) -> R in
        try body(buffer.baseAddress!, Int32(buffer.count))
    }
}
