public import CoinWatchProto
import Synchronization

/// One client connection to a CoinWatch server: the handshake done, calls from
/// any number of tasks multiplexed on it, keepalive running.
///
/// The callback API (`startUnary`, `startStream`) is the cheap path, for load
/// generators that run on the event loop; the async API builds on it. All
/// per-call state lives on the connection's event loop.
public final class RPCClientConnection: Sendable {
    public let eventLoop: EventLoop
    /// What the server announced in its `Welcome`.
    public let welcome: V1.Welcome
    /// `host:port`, for messages.
    public let address: String
    let handler: ClientConnectionHandler
    private let nextCallID = Atomic<UInt64>(1)

    init(eventLoop: EventLoop, welcome: V1.Welcome, address: String, handler: ClientConnectionHandler) {
        self.eventLoop = eventLoop
        self.welcome = welcome
        self.address = address
        self.handler = handler
    }

    /// Connects, performs the handshake, and starts keepalive.
    ///
    /// The handshake starts on the event loop the moment TCP connects, so a busy
    /// task pool cannot delay the `Hello` past the server's handshake timeout.
    public static func connect(
        host: String, port: Int, on loop: EventLoop, options: Options = Options()
    ) async throws(RPCError) -> RPCClientConnection {
        let address = "\(host):\(port)"
        typealias Outcome = Result<(V1.Welcome, ClientConnectionHandler), RPCError>
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            Connection.connect(host: host, port: port, on: loop, timeout: options.connectTimeout) { result in
                switch result {
                case .failure(let error):
                    continuation.resume(returning: .failure(
                        RPCError(code: .unavailable, message: "cannot connect to \(address): \(error.description(naming: address))")))
                case .success(let connection):
                    if let factory = options.transform {
                        do {
                            connection.startTransform(
                                try factory.makeClientTransform(host: host, port: port),
                                handshakeTimeout: options.connectTimeout)
                        } catch {
                            connection.close()
                            continuation.resume(returning: .failure(
                                RPCError(code: .unavailable, message: "cannot start TLS to \(address): \(error)")))
                            return
                        }
                    }
                    let handler = ClientConnectionHandler(connection: connection, options: options, address: address)
                    handler.begin { welcome in
                        continuation.resume(returning: welcome.map { ($0, handler) })
                    }
                }
            }
        }
        let (welcome, handler) = try outcome.get()
        return RPCClientConnection(eventLoop: loop, welcome: welcome, address: address, handler: handler)
    }

    /// Whether the connection can still carry calls (open, no `GoAway`, not dead).
    public var isUsable: Bool { handler.usable.load(ordering: .acquiring) }

    /// Calls started but not sent, waiting for room under the server's `max_concurrent_calls`: they are sent in
    /// the order they were started as earlier calls end, each with what is left of its deadline.
    public var heldCalls: Int { handler.heldCallCount.load(ordering: .relaxed) }

    /// Allocates a call id: unique on this connection (they never repeat).
    func makeCallID() -> UInt64 {
        nextCallID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    // MARK: Callback API

    /// Starts a unary call; `completion` runs on the event loop with the response
    /// payload or the call's error. Returns the call id (for `cancel`).
    @discardableResult
    public func startUnary(
        method: String, payload: [UInt8], timeout: Duration? = nil, metadata: [String: String] = [:],
        completion: @escaping @Sendable (Result<[UInt8], RPCError>) -> Void
    ) -> UInt64 {
        let id = makeCallID()
        let handler = self.handler
        // Called on the loop (a load generator's completion starting the next call): no closure to allocate.
        if eventLoop.inEventLoop {
            handler.startCall(id: id, method: method, payload: payload, timeout: timeout, metadata: metadata,
                              pending: .unary(completion))
            return id
        }
        onLoop {
            handler.startCall(id: id, method: method, payload: payload, timeout: timeout, metadata: metadata,
                              pending: .unary(completion))
        }
        return id
    }

    /// Starts a server stream; `onMessage` runs on the event loop for each message,
    /// then `onEnd` once (nil for OK). Returns the call id (for `cancel`).
    @discardableResult
    public func startStream(
        method: String, payload: [UInt8], timeout: Duration? = nil, metadata: [String: String] = [:],
        onMessage: @escaping @Sendable ([UInt8]) -> Void, onEnd: @escaping @Sendable (RPCError?) -> Void
    ) -> UInt64 {
        startRawStream(method: method, payload: payload, timeout: timeout, metadata: metadata,
                       onMessage: { onMessage(Array($0)) }, onEnd: onEnd)
    }

    /// `startStream` without copying: each message's bytes are valid only during
    /// `onMessage` (they point into the connection's read buffer).
    @discardableResult
    public func startRawStream(
        method: String, payload: [UInt8], timeout: Duration? = nil, metadata: [String: String] = [:],
        onMessage: @escaping @Sendable (UnsafeRawBufferPointer) -> Void, onEnd: @escaping @Sendable (RPCError?) -> Void
    ) -> UInt64 {
        let id = makeCallID()
        let handler = self.handler
        onLoop {
            handler.startCall(id: id, method: method, payload: payload, timeout: timeout, metadata: metadata,
                              pending: .stream(onMessage: onMessage, onEnd: onEnd))
        }
        return id
    }

    /// Cancels a call: its callbacks get CANCELLED and the server is told to stop.
    public func cancel(callID: UInt64) {
        let handler = self.handler
        onLoop { handler.cancel(id: callID, reason: RPCError(code: .cancelled, message: "cancelled by the caller")) }
    }

    /// Closes the connection; calls still running fail UNAVAILABLE.
    public func close() {
        let handler = self.handler
        onLoop { handler.close(reason: RPCError(code: .unavailable, message: "the connection was closed by the client")) }
    }

    /// Closes the connection once its calls have ended, taking no new ones: for a connection a newer one replaces
    /// while the calls the server accepted before its `GoAway` are still finishing (docs/PROTOCOL.md section 6).
    public func closeWhenIdle() {
        let handler = self.handler
        // Unusable from now on, for every thread; the close itself waits on the loop for the last call.
        handler.usable.store(false, ordering: .releasing)
        onLoop { handler.closeWhenIdle() }
    }

    private func onLoop(_ body: @escaping @Sendable () -> Void) {
        if eventLoop.inEventLoop {
            body()
        } else if !eventLoop.execute(body) {
            body()
        }
    }
}
