/// Threads that show up by name in `ps -T`, `top -H` and profiles.
///
/// Foundation's `Thread.name` is not handed to the operating system on Linux, so every worker thread of the server
/// appeared as `coinwatchd`, and a profile could not tell the settings writer from the alert thread.
public enum NamedThread {
    /// How the scheduler weighs a thread against the event loops when the CPU is short.
    public enum Priority: Sendable {
        /// As the loops.
        case normal
        /// Behind the loops (nice value raised by `backgroundNiceIncrement`): work that may wait while the loops
        /// answer calls, such as delivering a burst of notifications.
        case background
        /// The loops' share of the CPU, but batch-scheduled (`SCHED_BATCH`): woken, the thread waits for the one
        /// running on its core to block or use up its slice instead of preempting it. For threads that a loop
        /// hands work to once per round and that share its core: the loop then finishes its round (reading the
        /// requests that arrived, writing the answers that are ready) before they take it.
        case batch
    }

    /// How much a background thread's nice value is raised: at 10 the scheduler gives it about a tenth of the
    /// CPU a normal thread gets when both want it, and all of it when the loops are idle.
    static let backgroundNiceIncrement: Int32 = 10

    /// Starts a detached thread named `name` (the system keeps at most 15 bytes) running `body`. Whoever needs to
    /// wait for it signals its own completion from `body`.
    public static func start(name: String, priority: Priority = .normal, _ body: @escaping @Sendable () -> Void) {
        Sys.spawnThread(name: name) {
            // Best effort: a thread left at the loops' priority or policy still works, only less politely.
            switch priority {
            case .normal: break
            case .background: Sys.lowerThreadPriority(by: backgroundNiceIncrement)
            case .batch: Sys.useBatchScheduling()
            }
            body()
        }
    }

    /// The calling thread's nice value (nil if it cannot be read); for tests.
    static var currentNiceValue: Int32? {
        Sys.threadNiceValue()
    }

    /// Whether the calling thread is batch-scheduled (nil if its policy cannot be read); for tests.
    static var currentIsBatchScheduled: Bool? {
        Sys.threadIsBatchScheduled()
    }
}
