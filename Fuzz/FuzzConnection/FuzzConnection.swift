import CoinWatchLogging
import CoinWatchProto
import FuzzSupport
import Dispatch
import Synchronization
@testable import CoinWatchRPC

#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer target: the frame decoder and the server's connection state machine.
///
/// Input: one byte choosing a read size for the split-invariance check (its low bits) and the listener (its top
/// two: 0 and 1 plaintext; 2 a listener that also takes TLS, given the bytes as they are, so a stream that starts
/// with a TLS record goes to OpenSSL; 3 the same listener after a real TLS handshake, the bytes sent encrypted: the
/// hand-off from TLS to the protocol), then the byte stream a client sends. Each input is
/// 1. decoded in process, once whole and once in small reads: the frames and the error must not depend on how the
///    stream was split, and the zero-copy `FrameReader` must agree with the generated decoder on every frame it
///    accepts;
/// 2. written, followed by end of file, into a socket pair whose other end is a real `Connection` with a
///    `ServerConnection` on a real event loop, serving `FuzzService`. The server must answer with valid frames
///    (or the HTTP reply) and close; afterwards it must hold no connection, call, registration or timer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConnectionOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    Harness.shared.run(mode: data[0], stream: UnsafeRawBufferPointer(start: data + 1, count: size - 1))
    return 0
}

/// One event loop and the server state shared by all inputs, built on the first input.
final class Harness: Sendable {
    static let shared = Harness()

    /// Small limits, so that short inputs reach them.
    static let configuration: RPCServer.Configuration = {
        var configuration = RPCServer.Configuration()
        configuration.eventLoopThreads = 1
        configuration.maxFrameBytes = 4096
        configuration.maxConcurrentCallsPerConnection = 4
        configuration.handshakeTimeout = .seconds(60)
        configuration.idleTimeout = .zero
        configuration.highWatermark = 16 * 1024
        configuration.lowWatermark = 4 * 1024
        configuration.slowConsumerTimeout = .seconds(60)
        // Every input ends with the client's half-close; a held call then ends after this grace.
        configuration.shutdownGracePeriod = .milliseconds(100)
        configuration.pingBurst = 3
        return configuration
    }()

    /// Read sizes for the split-invariance check, picked by the first input byte.
    static let readSizes = [1, 2, 3, 4, 5, 7, 16, 300]

    let group: EventLoopGroup
    let server: ServerShared
    let tls: TLSFixture

    private init() {
        signal(SIGPIPE, SIG_IGN)
        do {
            group = try EventLoopGroup(threads: 1, namePrefix: "fuzz-loop")
        } catch {
            fatalError("cannot start an event loop: \(error)")
        }
        server = ServerShared(
            configuration: Self.configuration, methods: FuzzService.methods(loop: group.loops[0]), authorizer: nil,
            logger: .disabled, group: group)
        tls = TLSFixture()
    }

    var loop: EventLoop { group.loops[0] }

    func run(mode: UInt8, stream: UnsafeRawBufferPointer) {
        let limit = Self.configuration.maxFrameBytes
        let frames = FrameChecks.decoderIsSplitInvariant(
            stream, chunk: Self.readSizes[Int(mode) % Self.readSizes.count], maxFrameBytes: limit)
        for frame in frames { FrameChecks.readerAgreesWithDecoder(frame) }
        let httpRejected = stream.count >= 4 && frames.isEmpty
            && FrameDecoder.isHTTPPrefix(stream.prefix(4).reduce(0) { $0 << 8 | UInt32($1) })

        let listener = mode >> 6
        let (client, serverFD) = ClientSocket.pair()
        defer { client.close() }
        let server = self.server
        let loop = self.loop
        let transforms = listener >= 2 ? tls.serverTransforms : nil
        loop.execute {
            server.accept(Connection(adopting: serverFD, on: loop), tls: transforms)
        }
        guard let output = client.exchange(
            stream, maxOutput: 8 << 20, timeoutMilliseconds: 20_000, tls: listener == 3 ? tls.clientSession() : nil)
        else {
            fatalError("the server neither finished nor closed the connection within 20 s")
        }
        waitUntilIdle()
        // Bytes that start a TLS handshake on a listener that takes TLS are OpenSSL's to answer (an alert), not
        // the protocol's; everything else must get the protocol's answer, decrypted or not.
        let startsTLS = listener == 2 && stream.count >= 4
            && FrameDecoder.isTLSHandshakePrefix(stream.prefix(4).reduce(0) { $0 << 8 | UInt32($1) })
        if !startsTLS {
            OutputChecks.check(output: output, input: stream, inputFrames: frames, httpRejected: httpRejected)
        }
    }

    /// Waits for the server to close its side completely, then checks that nothing of the connection remains.
    private func waitUntilIdle() {
        let start = ClientSocket.nowMilliseconds()
        while server.counters.openConnections.load(ordering: .acquiring) != 0 {
            guard ClientSocket.nowMilliseconds() - start < 20_000 else {
                fatalError("the server still counts an open connection 20 s after the client saw it close")
            }
            usleep(50)
        }
        // A job on the loop orders everything the loop did before it (the semaphore publishes its view).
        let done = DispatchSemaphore(value: 0)
        let server = self.server
        let loop = self.loop
        let leftovers = Mutex("")
        loop.execute {
            let calls = server.stats.liveCalls
            let registrations = loop.registrationCount
            let timers = loop.timers.count
            let connections = server.tables[0].connections.count
            if calls != 0 || registrations != 0 || timers != 0 || connections != 0 {
                leftovers.withLock { $0 = "live calls \(calls), registrations \(registrations), timers \(timers), "
                    + "connections \(connections)" }
            }
            done.signal()
        }
        done.wait()
        let found = leftovers.withLock { $0 }
        if !found.isEmpty {
            fatalError("after the connection closed the server still holds: \(found)")
        }
    }
}
