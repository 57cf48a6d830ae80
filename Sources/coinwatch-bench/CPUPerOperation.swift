import CoinWatchMetrics
import CoinWatchProto

/// Where a rate's CPU went: each busy thread's CPU time (and that of whole other processes, such as a load's
/// source) between two readings, divided by the operations done between them. Printed beside a rate, so that a
/// reading says which thread set it.
struct CPUPerOperation {
    /// Nanoseconds per operation by thread name (or by the name given to another process), the busiest first;
    /// threads under a nanosecond per operation are left out.
    var threads: [(name: String, nanoseconds: Double)] = []

    /// A reading: `pid`'s threads by name (`ProcessMetrics.threadCPUSeconds`), and each of `processes` whole,
    /// under the name it is given.
    static func reading(pid: Int32, processes: [String: Int32] = [:]) -> [String: Double] {
        var seconds = ProcessMetrics.threadCPUSeconds(pid: pid)
        for (name, process) in processes {
            seconds[name] = ProcessMetrics.cpuSeconds(pid: process)
        }
        return seconds
    }

    init() {}

    init(from before: [String: Double], to after: [String: Double], operations: Int) {
        threads = after.compactMap { name, seconds -> (String, Double)? in
            let used = (seconds - (before[name] ?? 0)) * 1e9 / Double(max(operations, 1))
            return used >= 1 ? (name, used) : nil
        }.sorted { $0.1 > $1.1 }
    }

    var text: String {
        threads.map { "\($0.name) \(Int($0.nanoseconds.rounded())) ns" }.joined(separator: ", ")
    }

    /// A JSON object of nanoseconds by name: thread names are the kernel's, so they are escaped as any string.
    var json: String {
        var writer = JSONWriter()
        writer.beginObject()
        for (name, nanoseconds) in threads {
            writer.key(name)
            writer.number(Int(nanoseconds.rounded()))
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
