import CoinWatchCore
import Glibc

/// The process's own resident memory and CPU time, under the names every Prometheus client library gives them
/// (`process_resident_memory_bytes`, `process_cpu_seconds_total`), so an operator's usual dashboards and alerts on
/// a growing process work here unchanged.
///
/// Read at each scrape from the kernel: `VmRSS` in `/proc/self/status` (a procfs file the kernel writes when it
/// is read, never the disk) and `getrusage(RUSAGE_SELF)`; both take microseconds, so the scraping loop is not held.
public struct ProcessMetrics: MetricsCollector {
    public init() {}

    public func collect() -> [MetricFamily] {
        [
            .gauge("process_resident_memory_bytes", help: "Resident memory size in bytes.",
                   [MetricSample([], Self.residentBytes() ?? 0)]),
            .counter("process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.",
                     [MetricSample([], Self.cpuSeconds())]),
        ]
    }

    /// The resident memory of process `pid` (this process when nil) in bytes, from `/proc/PID/status`; nil when
    /// the process is gone or the kernel gave no figure.
    public static func residentBytes(pid: Int32? = nil) -> Int? {
        let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
        return SmallTextFile.read(path, limit: 16_384).flatMap(residentBytes(inStatus:))
    }

    /// `VmRSS` of a `/proc/PID/status` text in bytes: "VmRSS: Resident set size", given in kB (proc(5)).
    static func residentBytes(inStatus text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            // "VmRSS:\t   33180 kB": a tab, then spaces padding the number to a width it may fill.
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count == 3, fields[2] == "kB", let kib = Int(fields[1]) else { return nil }
            return kib * 1024
        }
        return nil
    }

    /// User and system CPU time of this process so far, in seconds.
    public static func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
