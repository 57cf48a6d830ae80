import CoinWatchCommandLine
import CoinWatchMetrics
import CoinWatchRPC
import Foundation

/// `idle` mode: opens `--connections` connections, completes each handshake,
/// holds them silent, and reports the server's resident memory per connection
/// (read from /proc/<--server-pid>/status before and while they are held).
struct IdleBenchmark {
    let options: BenchOptions

    func run() throws -> Int32 {
        guard let pid = options.serverPID else { throw UsageError("idle mode needs --server-pid PID (the coinwatchd to measure)") }
        let options = self.options
        raiseDescriptorLimit()
        let before = try Self.residentBytes(pid: pid)
        let group = try EventLoopGroup(threads: options.threads, namePrefix: "bench")
        defer { group.syncShutdownGracefully() }
        let connections = try options.connectAll(options.connections, on: group, clientName: "coinwatch-bench-idle")
        sleepSeconds(max(1, options.duration))
        let held = try Self.residentBytes(pid: pid)
        let perConnection = Double(held - before) / Double(connections.count)
        for connection in connections { connection.close() }
        print("idle: \(connections.count) connections held; server RSS \(before / 1024) KiB → \(held / 1024) KiB")
        print("  bytes per connection  \(Int(perConnection.rounded()))")
        if options.json {
            print("{\"mode\":\"idle\",\"connections\":\(connections.count),\"rss_before_bytes\":\(before),"
                + "\"rss_held_bytes\":\(held),\"bytes_per_connection\":\(Int(perConnection.rounded()))}")
        }
        return 0
    }

    /// The resident memory of process `pid`, or a clear error when it cannot be read (the process is gone).
    static func residentBytes(pid: Int) throws -> Int {
        guard let bytes = ProcessMetrics.residentBytes(pid: Int32(pid)) else { throw BenchError("no VmRSS for process \(pid)") }
        return bytes
    }
}
