import Synchronization

/// The current `TLSContext` of a listener or client, which `reload()` replaces with one built afresh from the
/// same files — a renewed certificate without a restart.
///
/// A reload builds the whole new context first; if anything fails (a missing file, a key that does not match,
/// a certificate that does not parse) the old context stays in use and the reason is thrown. Sessions already
/// open keep the context they were made from; only new sessions use the new one.
public final class ReloadableTLSContext: Sendable {
    public let configuration: TLSConfiguration
    private let current: Mutex<TLSContext>

    /// Builds the first context.
    ///
    /// - Throws: `TLSError` as `TLSContext.init` does.
    public init(_ configuration: TLSConfiguration) throws(TLSError) {
        self.configuration = configuration
        current = Mutex(try TLSContext(configuration))
    }

    /// The context new sessions are made from.
    public var context: TLSContext {
        current.withLock { $0 }
    }

    /// Rebuilds the context from the configuration's files and, only if that succeeds, makes it current.
    ///
    /// - Throws: `TLSError` saying why the new files were refused; the previous context is still current.
    public func reload() throws(TLSError) {
        let fresh = try TLSContext(configuration)
        current.withLock { $0 = fresh }
    }

    /// A new session from the current context (see `TLSContext.makeSession`).
    public func makeSession(
        serverName: String? = nil, resumptionKey: String? = nil, limits: TLSSession.Limits = TLSSession.Limits()
    ) throws(TLSError) -> TLSSession {
        try context.makeSession(serverName: serverName, resumptionKey: resumptionKey, limits: limits)
    }
}
