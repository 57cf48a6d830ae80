import CoinWatchCore
import CoinWatchLogging
import CoinWatchMetrics
import CoinWatchProto
import Dispatch
import FuzzSupport
import Synchronization
@testable import CoinWatchHTTP
@testable import CoinWatchRPC

#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer target: an HTTP/2 session (nghttp2 and the gRPC adapter over it) fed random bytes after a valid
/// client preface and SETTINGS frame.
///
/// Each input is sent over a socket pair to an `HTTPConnectionHandler` on a real event loop, serving gRPC
/// methods of every kind (inline, deferred, streams, a bidirectional stream) through the shared dispatcher,
/// followed by end of file. The server must finish (close its side) within the timeout, send a bounded amount,
/// and leave nothing behind: no live call, no connection. A crash, a hang, a leak or a sanitizer report is a finding.
final class FuzzHTTP2Server: Sendable {
    static let shared = FuzzHTTP2Server()

    let server: RPCServer
    let http: HTTPServer

    private init() {
        signal(SIGPIPE, SIG_IGN)
        var configuration = RPCServer.Configuration()
        configuration.eventLoopThreads = 1
        configuration.maxFrameBytes = 64 * 1024
        configuration.idleTimeout = .seconds(60)
        configuration.slowConsumerTimeout = .seconds(60)
        let methods: [RPCMethod] = [
            .unary(V1.Health.check, inline: { _, _ in V1.HealthCheckResponse(status: .serving) }),
            .unary(V1.CoinWatch.getSettings, deferred: { request, _, responder in
                DispatchQueue.global().async {
                    responder.succeed(V1.GetSettingsResponse(settings: V1.Settings(deviceID: request.deviceID, version: 1)))
                }
            }),
            .serverStream(V1.CoinWatch.streamPrices, onLoop: { request, stream in
                for sequence in 1...3 { stream.send(V1.PriceUpdate(symbol: request.symbols.first ?? "BTC", sequence: UInt64(sequence))) }
                if request.minIntervalMs == 0 { stream.finish() }
            }),
        ] + GRPCHealthService(services: ["coinwatch.v1.CoinWatch"], isServing: { true }).methods
            + GRPCReflectionService(services: ["coinwatch.v1.CoinWatch"]).methods
        do {
            server = try RPCServer(configuration: configuration, methods: methods)
        } catch {
            fatalError("cannot start an event loop: \(error)")
        }
        http = HTTPServer(rpc: server, configuration: HTTPServer.Configuration(metrics: MetricsRegistry(), isServing: { true }))
    }

    var loop: EventLoop { server.eventLoops[0] }

    func run(_ input: UnsafeRawBufferPointer) {
        let prefix = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0]
        let stream = prefix + Array(input)
        let (client, serverFD) = ClientSocket.pair()
        defer { client.close() }
        let http = self.http
        let loop = self.loop
        loop.execute {
            http.serve(Connection(adopting: serverFD, on: loop), peer: "fuzz", protocol: .http2)
        }
        let output = stream.withUnsafeBytes { client.exchange($0, maxOutput: 64 << 20, timeoutMilliseconds: 20_000) }
        guard output != nil else {
            fatalError("the server neither finished nor closed within 20 s")
        }
        // Let deferred answers from other threads land, then check that nothing is left.
        let server = self.server
        var leftovers = ""
        for _ in 0..<2000 {
            let done = DispatchSemaphore(value: 0)
            let found = Mutex("")
            loop.execute {
                let stats = server.stats
                if stats.liveCalls != 0 || stats.openConnections != 0 {
                    found.withLock { $0 = "live calls \(stats.liveCalls), connections \(stats.openConnections)" }
                }
                done.signal()
            }
            done.wait()
            leftovers = found.withLock { $0 }
            if leftovers.isEmpty { return }
            usleep(1000)
        }
        fatalError("after the connection closed the server still holds: \(leftovers)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP2OneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzHTTP2Server.shared.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
