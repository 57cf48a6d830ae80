import Glibc
import Testing
@testable import CoinWatchMetrics

@Suite struct ProcessMetricsTests {
    @Test("VmRSS is read in kB whether the kernel pads it or not, and nothing else is taken for it")
    func readsResidentMemoryFromStatus() {
        let status = "Name:\tcoinwatchd\nVmPeak:\t  123456 kB\nVmRSS:\t   33180 kB\nRssAnon:\t   20000 kB\n"
        #expect(ProcessMetrics.residentBytes(inStatus: status) == 33_180 * 1024)
        #expect(ProcessMetrics.residentBytes(inStatus: "VmRSS:\t123456789 kB\n") == 123_456_789 * 1024)
        #expect(ProcessMetrics.residentBytes(inStatus: "Name:\tx\nVmSize:\t 100 kB\n") == nil)
        #expect(ProcessMetrics.residentBytes(inStatus: "VmRSS:\t 12 pages\n") == nil)
        #expect(ProcessMetrics.residentBytes(inStatus: "VmRSS:\t kB\n") == nil)
    }

    @Test("this process's figures are read from the kernel; a process that does not exist has none")
    func readsThisProcess() {
        let own = ProcessMetrics.residentBytes()
        #expect((own ?? 0) > 0)
        #expect((ProcessMetrics.residentBytes(pid: getpid()) ?? 0) > 0)
        // Above the kernel's pid limit (at most 2^22), so no process has it.
        #expect(ProcessMetrics.residentBytes(pid: Int32(1 << 23)) == nil)
        #expect(ProcessMetrics.cpuSeconds() > 0)
    }

    @Test("a scrape carries both families under their usual names and types")
    func collectsTheUsualFamilies() {
        let families = ProcessMetrics().collect()
        let memory = families.first { $0.name == "process_resident_memory_bytes" }
        let cpu = families.first { $0.name == "process_cpu_seconds_total" }
        #expect(memory?.kind == .gauge)
        #expect(cpu?.kind == .counter)
        #expect((memory?.samples.first?.value ?? 0) > 0)
        #expect((cpu?.samples.first?.value ?? 0) > 0)
    }
}
