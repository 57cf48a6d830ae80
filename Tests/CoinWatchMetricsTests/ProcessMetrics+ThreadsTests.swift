import Glibc
import Testing
@testable import CoinWatchMetrics

@Suite struct ProcessMetricsThreadsTests {
    @Test("a stat line's name ends at its last parenthesis, and its CPU time is utime plus stime")
    func readsNameAndTicksFromStat() {
        // pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime …
        let line = "4321 (cw (odd) name) R 1 4321 4321 0 -1 4194560 120 0 3 0 700 55 0 0 20 0 9 0 1000 0 0\n"
        let read = ProcessMetrics.cpuTicks(inStat: line)
        #expect(read?.name == "cw (odd) name")
        #expect(read?.ticks == 755)
        #expect(ProcessMetrics.cpuTicks(inStat: "4321 (cw-feeds) S 1 2 3 4 5 6 7 8 9 10 11 12\n")?.ticks == 23)
        for broken in ["", "4321 cw-feeds S 1 2 3 4 5 6 7 8 9 10 11 12", "4321 (cw-feeds) S 1 2 3",
                       "4321 (cw-feeds) S 1 2 3 4 5 6 7 8 9 10 x 12", ") 4321 (x"] {
            #expect(ProcessMetrics.cpuTicks(inStat: broken) == nil, "\(broken)")
        }
    }

    @Test("this process's threads are read by name, and the running one's time grows as it works")
    func readsThisProcessesThreads() {
        let pid = getpid()
        let own = Self.threadName()
        #expect(!own.isEmpty)
        let before = ProcessMetrics.threadCPUSeconds(pid: pid)
        #expect(before[own] != nil, "\(before.keys.sorted())")
        // Work until the kernel has counted some of it (its unit is a clock tick), however long that takes here.
        let start = ProcessMetrics.cpuSeconds(pid: pid) ?? 0
        // Both readings are waited for: other threads may share this one's name (a pool's), so its name's time
        // can grow before the process's total has crossed a tick.
        var sink: UInt64 = 0
        var after = before
        var total = start
        for round in 0..<10_000 {
            for index in 0..<1_000_000 { sink = sink &* 31 &+ UInt64(index ^ round) }
            after = ProcessMetrics.threadCPUSeconds(pid: pid)
            total = ProcessMetrics.cpuSeconds(pid: pid) ?? 0
            if (after[own] ?? 0) > (before[own] ?? 0) && total > start { break }
        }
        #expect(sink != 1)
        #expect((after[own] ?? 0) > (before[own] ?? 0))
        #expect(total > start)
    }

    /// The calling thread's name, from `/proc/thread-self/comm`.
    static func threadName() -> String {
        guard let file = fopen("/proc/thread-self/comm", "r") else { return "" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test("a process that does not exist has no threads and no time")
    func readsNothingForAMissingProcess() {
        // Above the kernel's pid limit (at most 2^22), so no process has it.
        #expect(ProcessMetrics.threadCPUSeconds(pid: Int32(1 << 23)).isEmpty)
        #expect(ProcessMetrics.cpuSeconds(pid: Int32(1 << 23)) == nil)
    }
}
