import CoinWatchProto
import CoinWatchRPC

/// One connection's closed loop without the client library (`--client raw`): the
/// benchmark's counterpart of `redis-benchmark`'s lean client.
///
/// Calls are written from pre-encoded frames (`RawCallFrames`); replies are read
/// in place by the server's own `FrameReader` (call id, status) and every one is still
/// checked: status OK, and the call id that of a call in flight. Each call's
/// latency is measured from just before its frame is queued to the moment its
/// `End` is read. Output queued during one loop iteration leaves in one write, as
/// with the library.
///
/// Call ids encode the call's slot: slot `s` of `inFlight` issues ids `s + 1`,
/// `s + 1 + inFlight`, … so ids never repeat and an `End` finds its call without a
/// table lookup.
final class RawUnaryDriver: UnaryLoad, ConnectionDelegate, @unchecked Sendable {
    // @unchecked Sendable: every mutable member is touched only on `connection.eventLoop`
    // (the handshake, the frame callbacks, `start` and `collect` all run there); the
    // driver is only handed between threads to be scheduled there.
    let connection: Connection
    let frames: RawCallFrames
    let phase: Phase
    let inFlight: Int
    private var next: Int
    /// Per slot: the id of its outstanding call (0: none) and when it was issued.
    private var slotIDs: [UInt64]
    private var slotStarts: [UInt64]
    private var histogram = LatencyHistogram(capacity: 1 << 18)
    private var errors = 0
    private var firstError: String?
    private var handshake: ((Result<Void, RPCError>) -> Void)?
    /// Sent in `Hello`: the connection's credential (a service key, with authorisation on).
    private let authToken: String

    init(connection: Connection, frames: RawCallFrames, inFlight: Int, offset: Int, phase: Phase, authToken: String = "") {
        self.connection = connection
        self.frames = frames
        self.phase = phase
        self.inFlight = inFlight
        self.authToken = authToken
        next = offset % frames.count
        slotIDs = Array(repeating: 0, count: inFlight)
        slotStarts = Array(repeating: 0, count: inFlight)
    }

    /// Connects and completes the handshake.
    static func connect(
        host: String, port: Int, on loop: EventLoop, frames: RawCallFrames, inFlight: Int, offset: Int, phase: Phase,
        authToken: String, tls: (any ClientTransformFactory)? = nil
    ) async throws -> RawUnaryDriver {
        let connection = try await Connection.connect(host: host, port: port, on: loop)
        let driver = RawUnaryDriver(
            connection: connection, frames: frames, inFlight: inFlight, offset: offset, phase: phase, authToken: authToken)
        typealias Outcome = Result<Void, RPCError>
        let welcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            _ = loop.execute {
                if let tls {
                    // Before the connection starts, so its ClientHello leaves as it does.
                    do {
                        connection.startTransform(try tls.makeClientTransform(host: host, port: port))
                    } catch {
                        connection.close()
                        continuation.resume(returning: .failure(RPCError(code: .unavailable, message: "cannot start TLS: \(error)")))
                        return
                    }
                }
                driver.begin { continuation.resume(returning: $0) }
            }
        }
        try welcome.get()
        return driver
    }

    /// Loop: starts the connection and sends `Hello`.
    private func begin(_ completion: @escaping (Result<Void, RPCError>) -> Void) {
        handshake = completion
        connection.start(delegate: self)
        let hello = V1.Frame(kind: .hello(V1.Hello(
            protocolVersion: RPCProtocol.version, clientName: "coinwatch-bench", authToken: authToken)))
        hello.serializedBytes().withUnsafeBytes { connection.enqueueFrame(body: $0) }
    }

    var eventLoop: EventLoop { connection.eventLoop }

    func close() { connection.close() }

    /// Loop: fills every slot.
    func start() {
        let now = nowNanos()
        for slot in 0..<inFlight { issue(slot: slot, id: UInt64(slot + 1), now: now) }
    }

    private func issue(slot: Int, id: UInt64, now: UInt64) {
        let index = next
        next = next + 1 == frames.count ? 0 : next + 1
        slotIDs[slot] = id
        slotStarts[slot] = now
        connection.enqueueFrame(bodyLength: frames.bodySize(id: id, payload: index)) { buffer in
            frames.write(id: id, payload: index, into: buffer)
        }
    }

    func collect() -> (LatencyHistogram, Int, String?) {
        (histogram, errors, firstError)
    }

    private func recordError(_ message: @autoclosure () -> String) {
        guard phase.current == .measuring else { return }
        errors += 1
        if firstError == nil { firstError = message() }
    }

    // MARK: ConnectionDelegate

    func frameReceived(_ body: UnsafeRawBufferPointer, on connection: Connection) {
        guard handshake == nil, case .end(let id, let code, let message, _)? = FrameReader.read(body) else {
            slowFrame(body)
            return
        }
        completed(id: id, code: code, message: message.isEmpty ? nil : String(decoding: message, as: UTF8.self))
    }

    private func completed(id: UInt64, code: Int32, message: String?) {
        let slot = Int((id &- 1) % UInt64(inFlight))
        guard id != 0, slotIDs[slot] == id else {
            recordError("End for call id \(id), which is not in flight")
            return
        }
        let now = nowNanos()
        let state = phase.current
        if state == .measuring {
            if code == 0 {
                histogram.record(nanoseconds: now &- slotStarts[slot])
            } else {
                recordError(message.map { "code \(code): \($0)" } ?? "code \(code)")
            }
        }
        slotIDs[slot] = 0
        if state != .stopping { issue(slot: slot, id: id + UInt64(inFlight), now: now) }
    }

    /// The handshake and every frame `FrameReader` does not take.
    private func slowFrame(_ body: UnsafeRawBufferPointer) {
        let frame: V1.Frame
        do {
            frame = try V1.Frame(serializedBytes: body)
        } catch {
            fail(RPCError(code: .internal, message: "invalid frame from the server: \(error.message)"))
            return
        }
        switch frame.kind {
        case .welcome where handshake != nil:
            let completion = handshake
            handshake = nil
            completion?(.success(()))
        case .end(let end):
            completed(id: end.callID, code: end.status?.code.rawValue ?? 0, message: end.status?.message)
        case .goAway(let goAway):
            fail(RPCError(code: .unavailable, message: "the server is going away: \(goAway.reason)"))
        case .error(let error):
            fail(RPCError(code: .unavailable, message: "connection error \(error.code): \(error.message)"))
        case .ping(let ping):
            V1.Frame(kind: .pong(V1.Pong(payload: ping.payload))).serializedBytes().withUnsafeBytes {
                connection.enqueueFrame(body: $0)
            }
        default:
            fail(RPCError(code: .internal, message: "unexpected frame from the server: \(frame)"))
        }
    }

    private func fail(_ error: RPCError) {
        if let completion = handshake {
            handshake = nil
            completion(.failure(error))
        }
        recordError("\(error)")
        connection.close()
    }

    func connectionClosed(_ connection: Connection, error: IOError?) {
        if let completion = handshake {
            handshake = nil
            completion(.failure(RPCError(code: .unavailable, message: "closed during the handshake")))
        }
        if phase.current != .stopping, slotIDs.contains(where: { $0 != 0 }) {
            recordError("the connection closed\(error.map { ": \($0)" } ?? "")")
        }
    }
}
