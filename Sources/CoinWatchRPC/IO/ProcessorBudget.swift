import CoinWatchCore

/// How many cores this process may really use: the smallest of the processors online, the CPUs in
/// its affinity mask (`taskset`, a cpuset) and its cgroup v2 CPU quota rounded up.
///
/// Thread pools sized from the processors *online* oversubscribe a confined process. Two event
/// loops in a server that `taskset -c 0` or a one-CPU container confines to one core take turns
/// on it at the scheduler's tick (4 ms on a 250 Hz kernel), and every call queued behind the other
/// loop waits that long. Runtimes that size themselves to the machine (Go's `GOMAXPROCS`, the JVM's
/// `availableProcessors`) read the same three limits.
public struct ProcessorBudget: Sendable, Equatable {
    /// Processors online.
    public let online: Int
    /// CPUs in the affinity mask, nil if the kernel would not say.
    public let affinity: Int?
    /// Cores' worth of CPU time the cgroup quota allows, rounded up; nil without a quota.
    public let quota: Int?

    public init(online: Int, affinity: Int?, quota: Int?) {
        self.online = online
        self.affinity = affinity
        self.quota = quota
    }

    /// The budget: the tightest limit, at least 1.
    public var cores: Int { max(1, min(online, affinity ?? online, quota ?? online)) }

    /// The limits as the calling thread sees them now.
    public static func current() -> ProcessorBudget {
        ProcessorBudget(online: Sys.onlineProcessorCount(), affinity: Sys.affinityProcessorCount(),
                        quota: currentQuota())
    }

    /// The tightest `cpu.max` from this process's cgroup up to the root: a parent's quota binds its
    /// children. cgroup v1 (no `0::` line) is not read.
    static func currentQuota() -> Int? {
        guard let membership = SmallTextFile.read("/proc/self/cgroup"),
              let path = unifiedCgroupPath(membership) else { return nil }
        return ancestors(of: path)
            .compactMap { SmallTextFile.read("/sys/fs/cgroup\($0 == "/" ? "" : $0)/cpu.max") }
            .compactMap(quotaCores(cpuMax:))
            .min()
    }

    /// The cgroup v2 path from `/proc/self/cgroup` (the `0::/path` line).
    static func unifiedCgroupPath(_ membership: String) -> String? {
        for line in membership.split(separator: "\n") where line.hasPrefix("0::") {
            let path = line.dropFirst(3)
            return path.hasPrefix("/") ? String(path) : nil
        }
        return nil
    }

    /// `/a/b` → `["/a/b", "/a", "/"]`.
    static func ancestors(of path: String) -> [String] {
        var parts = path.split(separator: "/").map(String.init)
        var result: [String] = []
        while !parts.isEmpty {
            result.append("/" + parts.joined(separator: "/"))
            parts.removeLast()
        }
        result.append("/")
        return result
    }

    /// Cores' worth of a `cpu.max` setting ("quota period" in microseconds, or "max period" for
    /// none), rounded up: 150000 100000 allows one and a half cores of time, which two loops can use.
    static func quotaCores(cpuMax: String) -> Int? {
        let fields = cpuMax.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, fields[0] != "max",
              let quota = Int(fields[0]), let period = Int(fields[1]), quota > 0, period > 0 else { return nil }
        return max(1, (quota + period - 1) / period)
    }
}
