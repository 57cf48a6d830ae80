import Synchronization

/// What a handler knows about the call it serves, beyond the request.
///
/// A class, created once per call: handlers, responders and writers pass it
/// around by reference, so the call's strings and metadata are retained once
/// rather than on every copy.
public final class ServerContext: Sendable {
    /// The method path, e.g. `coinwatch.v1.CoinWatch/GetSettings`.
    public let method: String
    /// The call's metadata, as sent in `Call.metadata`.
    public let metadata: [String: String]
    /// When the call must be done by; `nil` when the client set no deadline.
    public let deadline: ContinuousClock.Instant?
    /// The peer's address, for logs.
    public let peer: String
    /// The token the client sent in its `Hello`, empty if none (the native protocol's connection-wide credential).
    public let authToken: String
    /// The transport that brought the call: `native`, `grpc`, …
    public let transport: String
    /// Who the peer proved to be when its connection was made: the subject of its verified TLS client
    /// certificate (RFC 2253, `CN=device-42,O=CoinWatch Test`) on a listener asking for one; empty otherwise.
    public let peerIdentity: String
    /// The loop the call arrived on, whose thread runs the handler: work a handler hands to another thread can
    /// wait for the end of the loop's round (`EventLoop.flushBeforeWriting`) and go as one batch. Nil for a context
    /// made outside a server.
    package let eventLoop: EventLoop?
    private let cancelled = Atomic<Bool>(false)

    public convenience init(
        method: String, metadata: [String: String] = [:], deadline: ContinuousClock.Instant? = nil, peer: String = "",
        authToken: String = "", transport: String = "native", peerIdentity: String = ""
    ) {
        self.init(method: method, metadata: metadata, deadline: deadline, peer: peer, authToken: authToken,
                  transport: transport, peerIdentity: peerIdentity, eventLoop: nil)
    }

    package init(
        method: String, metadata: [String: String], deadline: ContinuousClock.Instant?, peer: String,
        authToken: String, transport: String, peerIdentity: String, eventLoop: EventLoop?
    ) {
        self.eventLoop = eventLoop
        self.method = method
        self.metadata = metadata
        self.deadline = deadline
        self.peer = peer
        self.authToken = authToken
        self.transport = transport
        self.peerIdentity = peerIdentity
    }

    /// The bearer tokens the caller presented, in the order they are checked: the `authorization` metadata of
    /// the call (`Bearer <token>`, or the bare token the native protocol has always accepted), then the
    /// connection's `Hello` token (either form as well). Empty strings are left out.
    public var bearerTokens: [String] {
        [metadata["authorization"], authToken].compactMap { $0.map(Self.bearerToken) }.filter { !$0.isEmpty }
    }

    /// `token` for `Bearer token` (the scheme in any case, as HTTP's auth schemes are), the text itself otherwise.
    public static func bearerToken(_ credential: String) -> String {
        let scheme = "bearer "
        guard credential.utf8.count > scheme.utf8.count,
              credential.utf8.prefix(scheme.utf8.count).elementsEqual(scheme.utf8, by: { ($0 | 0x20) == $1 })
        else { return credential }
        var token = credential.utf8.dropFirst(scheme.utf8.count)
        // Optional whitespace after the scheme is spaces or tabs (RFC 9110 OWS).
        while token.first == 0x20 || token.first == 0x09 { token = token.dropFirst() }
        return String(decoding: token, as: UTF8.self)
    }

    /// Set once the call is cancelled, times out, or its connection goes away;
    /// long handlers check it. Any thread, cheap.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    package func cancel() { cancelled.store(true, ordering: .releasing) }
}
