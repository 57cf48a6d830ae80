import CoinWatchTestSupport
import CoinWatchProto
import Dispatch
import Synchronization
@testable import CoinWatchRPC

/// A small service on the real runtime that exercises every handler shape.
///
/// - `Health/Check` (inline): SERVING.
/// - `GetSettings` (async): echoes the device id; "slow" never answers (it ends
///   only by a deadline, a cancel or a disconnect); "gated" answers once the test
///   opens `gate`; "missing" fails NOT_FOUND.
/// - `SaveSettings` (deferred): answered from another thread; "gated" answers once the test opens `gate`,
///   counting in `answersNotSent` an answer that came after the call had ended.
/// - `GetPrices` (inline, from the request's bytes): answers a tick per symbol; the
///   first symbol "none" makes it return without answering, "twice" answer twice,
///   "fail" throw FAILED_PRECONDITION, "late-throw" answer and then throw, "big" answer 256 KiB (counted in
///   `bigAnswers`).
/// - `StreamPrices` (async stream): `min_interval_ms` messages (0 = until
///   cancelled, one every 5 ms), sequence numbers 1, 2, …
/// - `StreamAlerts` (loop-bound stream): writes 4 KiB messages as fast as the
///   connection takes them, counting bytes in `floodBytes`.
final class TestService: Sendable {
    let floodBytes = Atomic<Int>(0)
    let bigAnswers = Atomic<Int>(0)
    let answersNotSent = Atomic<Int>(0)
    let streamsEnded = Atomic<Int>(0)
    let gate = Gate()

    var methods: [RPCMethod] {
        [
            .unary(V1.Health.check, inline: { _, _ in V1.HealthCheckResponse(status: .serving) }),
            .unary(V1.CoinWatch.getSettings, async: { [gate] request, _ in
                switch request.deviceID {
                case "slow":
                    // Longer than any test: only a deadline, a cancel or a disconnect ends it.
                    try await Task.sleep(for: .seconds(24 * 3600))
                case "gated":
                    await gate.wait()
                case "missing":
                    throw RPCError(code: .notFound, message: "no settings for device 'missing'")
                default:
                    break
                }
                return V1.GetSettingsResponse(settings: V1.Settings(deviceID: request.deviceID, version: 1))
            }),
            .unary(V1.CoinWatch.getPrices, inlineBytes: { [self] payload, context, respond throws(RPCError) in
                let request = try RPCMethod.decode(V1.GetPricesRequest.self, payload)
                let response = V1.GetPricesResponse(prices: request.symbols.map { V1.Tick(symbol: $0) })
                let metadata = context.metadata.sorted { $0.key < $1.key }.map { V1.Tick(symbol: "\($0.key)=\($0.value)") }
                let answer = V1.GetPricesResponse(prices: response.prices + metadata).serializedBytes()
                switch request.symbols.first {
                case "none":
                    return
                case "twice":
                    answer.withUnsafeBytes(respond)
                    V1.GetPricesResponse().serializedBytes().withUnsafeBytes(respond)
                case "fail":
                    throw RPCError(code: .failedPrecondition, message: "asked to fail")
                case "late-throw":
                    answer.withUnsafeBytes(respond)
                    throw RPCError(code: .failedPrecondition, message: "thrown after answering")
                case "big":
                    bigAnswers.add(1, ordering: .relaxed)
                    V1.GetPricesResponse(prices: [V1.Tick(symbol: String(repeating: "b", count: 256 << 10))])
                        .serializedBytes().withUnsafeBytes(respond)
                default:
                    answer.withUnsafeBytes(respond)
                }
            }),
            .unary(V1.CoinWatch.saveSettings, deferred: { [self] request, _, responder in
                if request.deviceID == "gated" {
                    Task {
                        await gate.wait()
                        let answer = V1.SaveSettingsResponse(settings: V1.Settings(deviceID: "gated", version: 1))
                        responder.succeed(encodedResponse: answer.serializedBytes()) {
                            self.answersNotSent.add(1, ordering: .relaxed)
                        }
                    }
                    return
                }
                DispatchQueue.global().async {
                    responder.succeed(V1.SaveSettingsResponse(settings: V1.Settings(deviceID: request.deviceID, version: 2)))
                }
            }),
            .serverStream(V1.CoinWatch.streamPrices, async: { [self] request, writer, _ in
                defer { streamsEnded.add(1, ordering: .relaxed) }
                let count = UInt64(request.minIntervalMs)
                var sequence: UInt64 = 0
                while count == 0 || sequence < count {
                    sequence += 1
                    try await writer.write(V1.PriceUpdate(symbol: "BTC", sequence: sequence))
                    if count == 0 { try await Task.sleep(for: .milliseconds(5)) }
                }
            }),
            .serverStream(V1.CoinWatch.streamAlerts, onLoop: { [self] _, stream in
                let alert = V1.Alert(id: String(repeating: "x", count: 4096))
                func pump() {
                    while stream.isActive && stream.isWritable {
                        stream.send(alert)
                        floodBytes.add(4100, ordering: .relaxed)
                    }
                    if stream.isActive { stream.onWritable { pump() } }
                }
                stream.onTerminate { _ in self.streamsEnded.add(1, ordering: .relaxed) }
                pump()
            }),
        ]
    }
}

/// A latch for handlers: `wait` suspends until `open` is called (at once after it), so a test decides
/// when a call may finish instead of guessing how long it will take.
final class Gate: Sendable {
    private let state = Mutex<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// An in-process server on loopback port 0 with `TestService`.
struct RunningServer {
    let server: RPCServer
    let service: TestService

    init(authorizer: (any CallAuthorizer)? = nil, configure: (inout RPCServer.Configuration) -> Void = { _ in }) throws {
        var configuration = RPCServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoopThreads = 2
        configure(&configuration)
        service = TestService()
        server = try RPCServer(configuration: configuration, methods: service.methods, authorizer: authorizer)
        try server.start()
    }

    var port: Int { server.port }

    func connect(options: RPCClientConnection.Options = .init(), group: EventLoopGroup) async throws -> RPCClientConnection {
        try await RPCClientConnection.connect(host: "127.0.0.1", port: port, on: group.next(), options: options)
    }
}

/// Wire helpers for raw-socket tests.
enum RawFrames {
    static func frame(_ kind: V1.Frame.Kind) -> [UInt8] {
        FrameEncoder.frame(V1.Frame(kind: kind).serializedBytes())
    }

    static let hello = frame(.hello(V1.Hello(protocolVersion: 1, clientName: "raw-test")))

    /// `GetPrices` calls with `ids`, each asking for the answer `symbols` make (`["big"]`: 256 KiB).
    static func getPrices(_ ids: ClosedRange<UInt64>, symbols: [String]) -> [UInt8] {
        let payload = V1.GetPricesRequest(symbols: symbols).serializedBytes()
        return ids.flatMap { frame(.call(V1.Call(callID: $0, method: "coinwatch.v1.CoinWatch/GetPrices", payload: payload))) }
    }

    /// The `End` frames `raw` reads until `done` holds for them, or the server closes or falls silent: the frames
    /// are decoded as they complete, so a long stream costs one pass.
    static func readEnds(from raw: RawClient, until done: ([V1.End]) -> Bool) async -> [V1.End] {
        var ends: [V1.End] = []
        var buffer: [UInt8] = []
        var offset = 0
        while !done(ends) {
            let chunk = await raw.readSome()
            if chunk.isEmpty { break }
            buffer += chunk
            while buffer.count - offset >= 4 {
                let length = buffer[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
                guard buffer.count - offset - 4 >= length else { break }
                if let end = (try? V1.Frame(serializedBytes: Array(buffer[(offset + 4)..<(offset + 4 + length)])))?.end {
                    ends.append(end)
                }
                offset += 4 + length
            }
            if offset > 1 << 20 {
                buffer.removeFirst(offset)
                offset = 0
            }
        }
        return ends
    }

    /// Splits a byte stream into decoded frames (ignores a trailing partial frame).
    static func decode(_ bytes: [UInt8]) -> [V1.Frame] {
        var frames: [V1.Frame] = []
        var offset = 0
        while bytes.count - offset >= 4 {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard bytes.count - offset - 4 >= length else { break }
            if let frame = try? V1.Frame(serializedBytes: Array(bytes[(offset + 4)..<(offset + 4 + length)])) {
                frames.append(frame)
            }
            offset += 4 + length
        }
        return frames
    }
}

extension V1.Frame {
    var connectionError: V1.ConnectionError? {
        if case .error(let error) = kind { return error }
        return nil
    }

    var end: V1.End? {
        if case .end(let end) = kind { return end }
        return nil
    }
}
