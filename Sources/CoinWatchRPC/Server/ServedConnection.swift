/// A connection the server tracks until it closes, whatever protocol it speaks: counted against the
/// connection limit, drained on graceful shutdown, closed when the grace period is over.
///
/// The native `ServerConnection` is one; a connection handed to another protocol (`ProtocolHandoff`) takes its
/// place in the server's table and reports its end with `RPCServer.connectionClosed(_:)`. Loop-confined.
package protocol ServedConnection: AnyObject {
    var eventLoop: EventLoop { get }

    /// Graceful shutdown began: refuse new calls, end streams UNAVAILABLE, let unary calls finish, then close.
    func beginDrain()

    /// The grace period is over: end what is left and close.
    func forceClose()
}

/// Serves the connections of a server's port whose first bytes are not the native protocol.
///
/// The frame decoder recognises an HTTP request line or the HTTP/2 preface from the first four bytes, which a
/// native frame can never start with (they announce a frame over a gigabyte), so recognising them costs the
/// native path nothing. The native connection then asks the handoff for a handler, switches the connection to
/// byte-stream mode and replays every byte read so far to it. Without a handoff (or when it returns nil) the
/// peer gets the native protocol's one-line refusal.
package protocol ProtocolHandoff: Sendable {
    /// Loop: `connection` began with an HTTP request line or the HTTP/2 preface. Returns the handler that
    /// serves it from its first byte, or nil to refuse it.
    func handler(for connection: Connection, peer: String) -> (any ByteStreamDelegate & ServedConnection)?
}
