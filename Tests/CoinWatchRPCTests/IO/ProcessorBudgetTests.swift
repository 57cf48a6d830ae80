@testable import CoinWatchRPC
import Glibc
import Testing

@Suite("Processor budget")
struct ProcessorBudgetTests {
    @Test("the budget is the tightest of online, affinity and quota")
    func tightestLimit() {
        #expect(ProcessorBudget(online: 8, affinity: nil, quota: nil).cores == 8)
        #expect(ProcessorBudget(online: 8, affinity: 2, quota: nil).cores == 2)
        #expect(ProcessorBudget(online: 8, affinity: 4, quota: 3).cores == 3)
        #expect(ProcessorBudget(online: 2, affinity: 4, quota: 3).cores == 2)
    }

    @Test("cpu.max quotas round up to whole cores; no quota is nil")
    func cpuMax() {
        #expect(ProcessorBudget.quotaCores(cpuMax: "max 100000\n") == nil)
        #expect(ProcessorBudget.quotaCores(cpuMax: "100000 100000\n") == 1)
        #expect(ProcessorBudget.quotaCores(cpuMax: "150000 100000\n") == 2)
        #expect(ProcessorBudget.quotaCores(cpuMax: "50000 100000") == 1)
        #expect(ProcessorBudget.quotaCores(cpuMax: "400000 100000") == 4)
        #expect(ProcessorBudget.quotaCores(cpuMax: "") == nil)
        #expect(ProcessorBudget.quotaCores(cpuMax: "garbage") == nil)
        #expect(ProcessorBudget.quotaCores(cpuMax: "0 100000") == nil)
    }

    @Test("the cgroup v2 path comes from the 0:: line and every ancestor is checked")
    func cgroupPath() {
        let membership = "12:cpu,cpuacct:/legacy\n0::/system.slice/coinwatchd.service\n"
        #expect(ProcessorBudget.unifiedCgroupPath(membership) == "/system.slice/coinwatchd.service")
        #expect(ProcessorBudget.unifiedCgroupPath("12:cpu:/legacy\n") == nil)
        #expect(ProcessorBudget.ancestors(of: "/system.slice/coinwatchd.service")
                == ["/system.slice/coinwatchd.service", "/system.slice", "/"])
        #expect(ProcessorBudget.ancestors(of: "/") == ["/"])
    }

    @Test("this process's budget agrees with the processors online and its affinity")
    func current() throws {
        let budget = ProcessorBudget.current()
        #expect(budget.online == Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let affinity = try #require(budget.affinity)
        #expect(affinity >= 1 && affinity <= budget.online)
        #expect(budget.cores >= 1 && budget.cores <= affinity)
        #expect(EventLoopGroup.defaultThreadCount == budget.cores)
    }
}
