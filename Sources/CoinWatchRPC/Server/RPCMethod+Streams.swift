extension RPCMethod {
    /// The same method, with `started` told of each of its streams as it starts, before the method's own handler
    /// runs: for code that must be able to end a stream later from outside (the authoriser, when the credential
    /// that opened it is revoked). `started` runs on the stream's event loop. Methods that are not server
    /// streams are returned as they are.
    public func observingStreams(_ started: @escaping @Sendable (ServerStream) -> Void) -> RPCMethod {
        guard case .serverStream(let handler) = kind else { return self }
        return RPCMethod(path: path, kind: .serverStream { payload, stream in
            started(stream)
            handler(payload, stream)
        })
    }
}
