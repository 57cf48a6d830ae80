import CoinWatchLogging
import CoinWatchRPC

/// HTTP/1.1 on one connection: keep-alive, pipelined requests answered in order, slow requests timed out.
///
/// Loop-confined, owned by its `HTTPConnectionHandler`. Each complete request gets a slot in `slots`, in the
/// order it arrived; a slot is filled when its response is ready (at once for everything served today; later
/// for a call answered from another thread) and responses leave strictly in slot order. At most
/// `maxPipelined` requests wait at once: beyond that the connection stops reading, so a client that pipelines
/// without reading holds only what TCP holds.
final class HTTP1Session {
    /// One pipelined request's place in the answer order.
    private struct Slot {
        var response: HTTPResponse?
        var isHead = false
        var closeAfter = false
    }

    static let maxPipelined = 32

    let connection: Connection
    let server: HTTPServer
    let peer: String
    private var parser: HTTP1Parser
    private var slots: [Slot] = []
    private var firstSlot = 0
    /// A response with `Connection: close` was queued (or the parser failed): nothing more is read or answered.
    private var closing = false
    private var draining = false
    private var requestTimer: TimerHandle?
    private var idleTimer: TimerHandle?

    init(connection: Connection, server: HTTPServer, peer: String) {
        self.connection = connection
        self.server = server
        self.peer = peer
        self.parser = HTTP1Parser(limits: server.configuration.http1Limits)
        scheduleIdle()
    }

    // MARK: Input

    func received(_ bytes: UnsafeRawBufferPointer) {
        guard !closing else { return }
        var requests: [HTTP1Request] = []
        var failure: HTTP1ParseError?
        do {
            try parser.parse(bytes, into: &requests)
        } catch {
            failure = error
        }
        for request in requests where !closing {
            handle(request)
        }
        if let failure, !closing {
            server.logger.debug("refused an HTTP/1.1 request", ["peer": peer, "status": "\(failure.status)", "reason": failure.message])
            enqueue(.text(failure.status, failure.message), isHead: false, close: true)
        }
        updateTimers()
    }

    private func handle(_ request: HTTP1Request) {
        let isHead = request.method == "HEAD"
        let close = !request.keepAlive || draining
        let route = HTTPRoute.route(method: request.method, path: request.path, contentType: request.header("content-type"))
        let response: HTTPResponse
        switch route {
        case .metrics, .healthz, .readyz:
            response = server.endpoints.response(route)
        case .grpc:
            response = .text(505, "gRPC needs HTTP/2: call this path with a gRPC client (plaintext HTTP/2 with prior "
                              + "knowledge, as grpcurl -plaintext does) on this same port")
        case .connect:
            // The routing point for the Connect protocol's adapter, which serves these content types on the same paths.
            response = .text(415, "the Connect protocol is not served by this server yet; use gRPC over HTTP/2 or the "
                              + "native protocol (docs/PROTOCOL.md)")
        case .unsupportedMediaType(let type):
            response = .text(415, "content type '\(type)' is not served here; RPC paths take application/grpc over HTTP/2")
        case .methodNotAllowed(let allowed):
            response = .text(405, "method \(request.method) is not allowed here; use \(allowed)", headers: [("allow", allowed)])
        case .notFound:
            response = .text(404, "no such path: \(request.path) (try /metrics, /healthz or /readyz)")
        }
        enqueue(response, isHead: isHead, close: close)
    }

    // MARK: Output

    /// Queues a response in the next slot and writes every ready response at the head, in order.
    private func enqueue(_ response: HTTPResponse, isHead: Bool, close: Bool) {
        slots.append(Slot(response: response, isHead: isHead, closeAfter: close))
        if close { closing = true }
        writeReady()
    }

    private func writeReady() {
        while firstSlot < slots.count, let response = slots[firstSlot].response {
            let slot = slots[firstSlot]
            firstSlot += 1
            write(response, isHead: slot.isHead, close: slot.closeAfter)
            if slot.closeAfter {
                connection.close(afterFlush: .seconds(2))
                slots = []
                firstSlot = 0
                return
            }
        }
        if firstSlot == slots.count {
            slots.removeAll(keepingCapacity: true)
            firstSlot = 0
        }
        if slots.count - firstSlot >= Self.maxPipelined {
            connection.pauseInput()
        } else if connection.isInputPaused && connection.isWritable {
            connection.resumeInput()
        }
    }

    private func write(_ response: HTTPResponse, isHead: Bool, close: Bool) {
        var head = "HTTP/1.1 \(response.status) \(HTTPResponse.reason(response.status))\r\n"
        for (name, value) in response.headers {
            head += "\(name): \(value)\r\n"
        }
        head += "content-length: \(response.body.count)\r\n"
        if close { head += "connection: close\r\n" }
        head += "\r\n"
        connection.enqueue(Array(head.utf8))
        if !isHead && !response.body.isEmpty {
            connection.enqueue(response.body)
        }
    }

    // MARK: Timers

    /// A request that has begun must be complete within the request timeout (a peer trickling its header
    /// section holds a connection, not the server); an idle keep-alive connection closes after the idle timeout.
    private func updateTimers() {
        guard !closing else {
            cancelTimers()
            return
        }
        if parser.isInsideRequest {
            if requestTimer == nil {
                let timeout = server.configuration.requestTimeout
                requestTimer = connection.eventLoop.scheduleTimer(after: timeout) { [unowned self] in
                    requestTimer = nil
                    guard !closing else { return }
                    server.logger.debug("HTTP/1.1 request timed out", ["peer": peer])
                    enqueue(.text(408, "the request was not complete within \(timeout)"), isHead: false, close: true)
                }
            }
        } else if let timer = requestTimer {
            connection.eventLoop.cancelTimer(timer)
            requestTimer = nil
        }
        scheduleIdle()
    }

    private func scheduleIdle() {
        if let timer = idleTimer { connection.eventLoop.cancelTimer(timer) }
        idleTimer = nil
        let timeout = server.rpc.configuration.idleTimeout
        guard timeout > .zero else { return }
        idleTimer = connection.eventLoop.scheduleTimer(after: timeout) { [unowned self] in
            idleTimer = nil
            guard !closing else { return }
            closing = true
            connection.close(afterFlush: .seconds(2))
        }
    }

    private func cancelTimers() {
        for timer in [requestTimer, idleTimer].compactMap({ $0 }) { connection.eventLoop.cancelTimer(timer) }
        requestTimer = nil
        idleTimer = nil
    }

    // MARK: Connection events

    func writabilityChanged(_ isWritable: Bool) {
        if isWritable {
            if !closing && slots.count - firstSlot < Self.maxPipelined { connection.resumeInput() }
        } else {
            connection.pauseInput()
        }
    }

    /// Graceful shutdown: answer what was asked, then close (an idle connection closes now).
    func beginDrain() {
        draining = true
        if slots.count == firstSlot && !parser.isInsideRequest {
            closing = true
            cancelTimers()
            connection.close(afterFlush: .seconds(2))
        }
    }

    func closed() {
        closing = true
        cancelTimers()
    }
}
