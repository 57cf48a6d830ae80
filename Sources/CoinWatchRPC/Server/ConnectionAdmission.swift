/// Decides, as each connection is accepted, whether its peer may connect at all: per-address limits, before a
/// single byte is read. One admission serves every transport, since they all arrive through the same accept.
///
/// Runs on the event loop that accepted the connection: it must answer from memory and never block.
public protocol ConnectionAdmission: Sendable {
    /// nil to admit the connection from `peer` (`host:port`, as `Connection.peerAddress()` gives it); the error
    /// the connection is closed with (after a `ConnectionError` saying so) to refuse it. Every admitted
    /// connection is later passed to `closed`.
    func admit(peer: String) -> RPCError?

    /// An admitted connection from `peer` ended.
    func closed(peer: String)
}
