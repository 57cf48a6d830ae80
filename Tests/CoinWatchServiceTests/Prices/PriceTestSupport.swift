import CoinWatchAuth
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Dispatch
import Glibc
import Synchronization
import Testing
@testable import CoinWatchService

/// Values and waits shared by the price tests.
enum PriceFixtures {
    static func symbol(_ text: String) -> Symbol {
        try! Symbol(validating: text)
    }

    static func price(_ text: String) -> ExactDecimal {
        ExactDecimal(text)!
    }

    static func tick(_ symbol: String, _ price: String, timeMs: Int64 = 1_700_000_000_000) -> PriceTick {
        PriceTick(symbol: Self.symbol(symbol), price: Self.price(price), timeMs: timeMs)
    }

    static func wire(_ text: String) -> V1.Decimal {
        let value = price(text)
        return V1.Decimal(mantissa: value.mantissa, scale: UInt32(value.scale))
    }

    static func exact(_ decimal: V1.Decimal?) -> ExactDecimal? {
        decimal.flatMap { ExactDecimal(mantissa: $0.mantissa, scale: Int($0.scale)) }
    }
}

/// A hub served by a real in-process `RPCServer` on loopback port 0, and a client event loop group.
final class HubHarness: Sendable {
    let hub: PriceHub
    let server: RPCServer
    let clients: EventLoopGroup

    init(
        hub configuration: PriceHub.Configuration = PriceHub.Configuration(), database: Database? = nil,
        publishToken: String? = nil, onTicks: (@Sendable ([PriceTick]) -> Void)? = nil,
        server configure: (inout RPCServer.Configuration) -> Void = { _ in }
    ) throws {
        hub = try PriceHub(configuration: configuration, database: database, onTicks: onTicks)
        var serverConfiguration = RPCServer.Configuration()
        serverConfiguration.host = "127.0.0.1"
        serverConfiguration.port = 0
        serverConfiguration.eventLoopThreads = 2
        configure(&serverConfiguration)
        // A publish token is checked by the authoriser, as coinwatchd's is (authorisation off, token set).
        let authorizer = try publishToken.map { token in
            Authorizer(configuration: Authorizer.Configuration(), credentials: try CredentialStore(database: nil, publishToken: token))
        }
        server = try RPCServer(configuration: serverConfiguration, methods: hub.methods, authorizer: authorizer)
        try server.start()
        clients = try EventLoopGroup(threads: 2, namePrefix: "price-test-client")
    }

    func connect(authToken: String = "") async throws -> RPCClientConnection {
        var options = RPCClientConnection.Options()
        options.authToken = authToken
        return try await RPCClientConnection.connect(
            host: "127.0.0.1", port: server.port, on: clients.next(), options: options)
    }

    /// Stops the server, then the hub, then the client loops.
    func shutdown() async {
        await server.shutdownNow()
        hub.close()
        await clients.shutdownGracefully()
    }
}

/// Records a `StreamPrices` call through the client's callback API, so a test can wait on what arrived without
/// owning an async iterator.
final class UpdateRecorder: Sendable {
    private struct State {
        var updates: [V1.PriceUpdate] = []
        var ended = false
        var error: RPCError?
    }

    private let state = Mutex(State())
    private let client: RPCClientConnection
    private let callID = Atomic<UInt64>(0)

    init(client: RPCClientConnection, request: V1.StreamPricesRequest) {
        self.client = client
        let id = client.startStream(
            method: V1.CoinWatch.streamPrices.path, payload: request.serializedBytes(),
            onMessage: { [self] bytes in
                let update = try? V1.PriceUpdate(serializedBytes: bytes)
                state.withLock { $0.updates.append(update ?? V1.PriceUpdate(symbol: "<undecodable>")) }
            },
            onEnd: { [self] error in
                state.withLock {
                    $0.ended = true
                    $0.error = error
                }
            })
        callID.store(id, ordering: .relaxed)
    }

    var updates: [V1.PriceUpdate] { state.withLock { $0.updates } }
    var ended: Bool { state.withLock { $0.ended } }
    var error: RPCError? { state.withLock { $0.error } }

    /// The last update received for `symbol`.
    func last(_ symbol: String) -> V1.PriceUpdate? {
        state.withLock { $0.updates.last { $0.symbol == symbol } }
    }

    func cancel() {
        client.cancel(callID: callID.load(ordering: .relaxed))
    }
}

/// A blocking loopback socket speaking just enough of the protocol to start a call, and then reading only when
/// told to: a subscriber that does not keep up.
final class StalledSubscriber {
    private var fd: Int32

    /// Connects with a small receive buffer, so the server's queue fills after little data.
    init(port: Int, receiveBuffer: Int32 = 4096) throws {
        // socket: returns a new descriptor owned by this object (closed in `close`), or -1 with errno.
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw StalledSubscriberError(message: "socket failed, errno \(errno)") }
        var size = receiveBuffer
        // setsockopt: copies the option value; SO_RCVBUF must be set before connect to bound the TCP window.
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        // connect: reads the caller's address for the duration of the call; 0 or -1 with errno.
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close()
            throw StalledSubscriberError(message: "connect failed, errno \(code)")
        }
    }

    deinit {
        close()
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends `Hello` and a `StreamPrices` call with id `callID`.
    func startStream(_ request: V1.StreamPricesRequest, callID: UInt64 = 1) {
        send(.hello(V1.Hello(protocolVersion: 1, clientName: "stalled-subscriber")))
        send(.call(V1.Call(
            callID: callID, method: V1.CoinWatch.streamPrices.path, payload: request.serializedBytes())))
    }

    private func send(_ kind: V1.Frame.Kind) {
        let body = V1.Frame(kind: kind).serializedBytes()
        let length = UInt32(body.count)
        let frame = [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + body
        // send: copies from the caller's buffer; a blocking socket sends these few bytes whole.
        let sent = frame.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        precondition(sent == frame.count, "short send of a small frame")
    }

    /// Reads frames until one satisfies `stop`, the peer closes, the 5 s receive timeout passes, or `limit`
    /// bytes were read. Returns that frame (nil if none) and how many frames were read.
    func read(limit: Int = 256 << 20, until stop: (V1.Frame) -> Bool) -> (match: V1.Frame?, frames: Int) {
        var frames = 0
        var pending: [UInt8] = []
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while total < limit {
            // recv: writes at most `count` bytes into the caller's buffer; 0 at end of stream, -1 on timeout/error.
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return (nil, frames) }
            total += count
            pending += buffer[..<count]
            var offset = 0
            while pending.count - offset >= 4 {
                let length = Int(pending[offset]) << 24 | Int(pending[offset + 1]) << 16
                    | Int(pending[offset + 2]) << 8 | Int(pending[offset + 3])
                guard pending.count - offset - 4 >= length else { break }
                let body = Array(pending[(offset + 4)..<(offset + 4 + length)])
                offset += 4 + length
                guard let frame = try? V1.Frame(serializedBytes: body) else { continue }
                frames += 1
                if stop(frame) { return (frame, frames) }
            }
            pending.removeFirst(offset)
        }
        return (nil, frames)
    }
}

struct StalledSubscriberError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

extension HubHarness {
    /// Runs a job on every server loop that waits until `release` is called on the result, and returns once all of
    /// them are waiting: what is published meanwhile reaches each loop as one drain (or overflows its mailbox).
    func holdServerLoops(sourceLocation: SourceLocation = #_sourceLocation) async -> HeldLoops {
        let held = HeldLoops(count: server.eventLoops.count)
        for loop in server.eventLoops {
            loop.execute {
                held.blocked.add(1, ordering: .relaxed)
                held.gate.wait()
            }
        }
        #expect(
            await eventually { held.blocked.load(ordering: .relaxed) == held.count },
            "the server loops did not all block", sourceLocation: sourceLocation)
        return held
    }
}

/// Server loops held by `HubHarness.holdServerLoops`.
final class HeldLoops: Sendable {
    let count: Int
    let blocked = Atomic<Int>(0)
    let gate = DispatchSemaphore(value: 0)

    init(count: Int) {
        self.count = count
    }

    /// Lets every held loop go on.
    func release() {
        for _ in 0..<count { gate.signal() }
    }
}
