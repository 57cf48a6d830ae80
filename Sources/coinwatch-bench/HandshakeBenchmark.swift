import CoinWatchCommandLine
import CoinWatchRPC
import CoinWatchTLS
import Synchronization

/// `handshakes` mode: new TLS connections as fast as the server completes them, each a TCP connect, a TLS
/// handshake and the native `Hello`/`Welcome`, then closed; `--connections` of them at a time for the duration.
/// With `--no-resume` every handshake is a full one; otherwise clients offer the last session (the abbreviated
/// handshake a reconnecting phone makes). The figure to put beside `openssl s_time -new|-reuse` against the same
/// certificate.
struct HandshakeBenchmark {
    let options: BenchOptions
    let resumes: Bool

    func run() throws -> Int32 {
        guard var configuration = options.tlsConfiguration else {
            throw UsageError("handshakes mode needs --tls (or --ca-file)")
        }
        configuration.sessionResumption = resumes
        let transforms: TLSClientTransforms
        do {
            transforms = TLSClientTransforms(context: try TLSContext(configuration), serverName: options.tls?.serverName)
        } catch {
            throw UsageError("--ca-file: \(error)")
        }
        let options = self.options
        raiseDescriptorLimit()
        let group = try EventLoopGroup(threads: options.threads, namePrefix: "bench")
        defer { group.syncShutdownGracefully() }
        let workers = options.connectionsGiven ?? 4
        let counts = HandshakeCounts()
        let connectOnce: @Sendable () async -> Void = {
            var connectOptions = RPCClientConnection.Options()
            connectOptions.clientName = "coinwatch-bench-handshakes"
            connectOptions.authToken = options.token
            connectOptions.keepaliveInterval = .zero
            connectOptions.transform = transforms
            do throws(RPCError) {
                let connection = try await RPCClientConnection.connect(
                    host: options.host, port: options.port, on: group.next(), options: connectOptions)
                connection.close()
                counts.completed.add(1, ordering: .relaxed)
            } catch {
                counts.failures.add(1, ordering: .relaxed)
                counts.firstFailure.withLock { $0 = $0 ?? error.description }
            }
        }
        let warmupEnd = nowNanos() + UInt64(options.warmup * 1e9)
        let end = warmupEnd + UInt64(options.duration * 1e9)
        try runBlocking {
            await withTaskGroup(of: Void.self) { tasks in
                for _ in 0..<workers {
                    tasks.addTask {
                        while nowNanos() < end {
                            let measured = nowNanos() >= warmupEnd
                            await connectOnce()
                            if measured { counts.measured.add(1, ordering: .relaxed) }
                        }
                    }
                }
            }
        }
        let perSecond = Double(counts.measured.load(ordering: .relaxed)) / max(options.duration, 0.001)
        let failed = counts.failures.load(ordering: .relaxed)
        print("handshakes: \(workers) at a time, session resumption \(resumes ? "offered" : "off")")
        print("  handshakes/s  \(Int(perSecond.rounded()))")
        print("  failures      \(failed)\(counts.firstFailure.withLock { $0 }.map { " (first: \($0))" } ?? "")")
        if options.json {
            print("{\"mode\":\"handshakes\",\"handshakes_per_second\":\(Int(perSecond.rounded())),\"failures\":\(failed),"
                + "\"concurrency\":\(workers),\"resumption\":\(resumes)}")
        }
        return failed == 0 && counts.completed.load(ordering: .relaxed) > 0 ? 0 : 1
    }
}

/// The handshake workers' tallies.
final class HandshakeCounts: Sendable {
    let completed = Atomic<Int>(0)
    /// Completed after the warm-up.
    let measured = Atomic<Int>(0)
    let failures = Atomic<Int>(0)
    let firstFailure = Mutex<String?>(nil)
}
