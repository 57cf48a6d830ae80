import CoinWatchCore
import Glibc

extension ProcessMetrics {
    /// The CPU time (user and system) each thread of process `pid` has used so far, in seconds, summed over the
    /// threads of one name: what shows which of a server's threads a load keeps busy (`coinwatch-bench feeds` reads
    /// it per message). From `/proc/PID/task/*/stat`; empty when the process is gone. A thread that exits between
    /// two readings takes its time with it.
    public static func threadCPUSeconds(pid: Int32) -> [String: Double] {
        let directory = "/proc/\(pid)/task"
        // opendir(3): the stream is ours; the defer closes it.
        guard let stream = opendir(directory) else { return [:] }
        defer { closedir(stream) }
        var seconds: [String: Double] = [:]
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.first?.isNumber == true,
                  let text = SmallTextFile.read("\(directory)/\(name)/stat", limit: 2048),
                  let (thread, ticks) = cpuTicks(inStat: text)
            else { continue }
            seconds[thread, default: 0] += Double(ticks) / clockTicksPerSecond
        }
        return seconds
    }

    /// The CPU time (user and system) process `pid` has used so far, all its threads together, in seconds, from
    /// `/proc/PID/stat`; nil when the process is gone.
    public static func cpuSeconds(pid: Int32) -> Double? {
        SmallTextFile.read("/proc/\(pid)/stat", limit: 2048).flatMap(cpuTicks(inStat:)).map {
            Double($0.ticks) / clockTicksPerSecond
        }
    }

    /// The name and the user plus system time, in clock ticks, of a `/proc/PID/stat` (or `task/TID/stat`) text:
    /// "pid (comm) state …", utime and stime being fields 14 and 15 (proc(5)). The name may hold spaces and
    /// parentheses, so it ends at the last ')'.
    static func cpuTicks(inStat text: String) -> (name: String, ticks: UInt64)? {
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close else { return nil }
        let name = String(text[text.index(after: open)..<close])
        // Fields from 3 (state) on.
        let fields = text[text.index(after: close)...].split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        return (name, user + system)
    }

    /// sysconf(_SC_CLK_TCK): the unit of /proc's times (100 on Linux); 100 if the call fails.
    static var clockTicksPerSecond: Double {
        let ticks = sysconf(Int32(_SC_CLK_TCK))
        return ticks > 0 ? Double(ticks) : 100
    }
}
