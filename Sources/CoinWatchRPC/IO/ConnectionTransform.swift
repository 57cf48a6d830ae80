/// A layer between a connection's socket and its protocol that changes the bytes both ways — TLS is the one
/// there is — driven by the connection on its event loop.
///
/// Input read from the socket goes in through ``receive(_:)`` and comes out decoded through ``readDecoded(into:)``
/// before the connection frames it or hands it to a byte-stream delegate. Output the protocol queues stays plain
/// in the connection's queue (its watermarks and input pausing work on plain bytes, as without a transform) and
/// is handed to ``encode(_:)`` when the connection flushes, as much as the socket takes; what the transform wants
/// sent — encoded output, its own handshake messages, alerts — is drained with ``drainOutput(into:)``.
///
/// The connection calls every method on its loop, never concurrently; an implementation needs no lock and must
/// never block. The type lives here, without OpenSSL; `CoinWatchTLS` implements it.
public protocol ConnectionTransform: AnyObject {
    /// Called once, when the connection starts using the transform (a TLS client writes its ClientHello).
    func begin() throws(IOError)

    /// Takes bytes read from the socket. Throws when they break the transform's protocol; the connection then
    /// sends whatever the transform still has to say (an alert) and closes with the error.
    func receive(_ bytes: UnsafeRawBufferPointer) throws(IOError)

    /// Writes decoded input into `buffer`. Call until it returns ``ConnectionTransformRead/needsInput``.
    func readDecoded(into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> ConnectionTransformRead

    /// Whether the transform's handshake is complete, so output may be encoded and input decoded.
    var isEstablished: Bool { get }

    /// The application protocol the handshake chose (TLS ALPN: `h2`, `http/1.1`, `coinwatch`), if any.
    var applicationProtocol: String? { get }

    /// Who the peer proved to be during the handshake (TLS: the subject of its verified certificate, for a
    /// server asking for client certificates), if anyone.
    var peerIdentity: String? { get }

    /// Encodes output for the peer (only once established).
    func encode(_ bytes: UnsafeRawBufferPointer) throws(IOError)

    /// Encoded bytes waiting to be sent.
    var pendingOutputCount: Int { get }

    /// Moves up to `buffer.count` encoded bytes into `buffer`; returns how many.
    func drainOutput(into buffer: UnsafeMutableRawBufferPointer) -> Int

    /// The socket reached end of file. Throws when that is an error for the transform (during a handshake).
    func inputEnded() throws(IOError)

    /// Starts the transform's orderly close (TLS close_notify), queued as output. Nothing can be encoded after.
    func close()
}

/// What ``ConnectionTransform/readDecoded(into:)`` found.
public enum ConnectionTransformRead: Hashable, Sendable {
    /// This many decoded bytes are at the start of the buffer.
    case bytes(Int)
    /// Nothing more until more input is received.
    case needsInput
    /// The peer closed its side within the transform (TLS close_notify): no more input will come.
    case ended
}

/// Makes the transform of each connection a server accepts with a TLS handshake: a listener's TLS
/// configuration, as a server sees it.
public protocol ServerTransformFactory: Sendable {
    /// A transform for one accepted connection (made on the connection's loop).
    func makeServerTransform() throws(IOError) -> any ConnectionTransform

    /// Whether connections that do not start a TLS handshake are refused (a TLS-only listener).
    var requiresTransform: Bool { get }
}

/// Makes the transform of each connection a client opens: a client's TLS configuration.
public protocol ClientTransformFactory: Sendable {
    /// A transform for a connection to `host:port` (made on the connection's loop, before it starts).
    func makeClientTransform(host: String, port: Int) throws(IOError) -> any ConnectionTransform
}

extension IOError {
    /// A transform failed on `function` ("TLS handshake", ...): `EPROTO`, with the transform's reason as the
    /// detail.
    public static func transformFailed(_ function: String, detail: String) -> IOError {
        IOError(errno: Sys.EPROTO_, function: function, detail: detail)
    }

    /// Whether this is a transform's failure (see ``transformFailed(_:detail:)``).
    public var isTransformFailure: Bool { errno == Sys.EPROTO_ }
}
