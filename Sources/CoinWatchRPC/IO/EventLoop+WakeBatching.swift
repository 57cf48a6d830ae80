extension EventLoop {
    /// Runs `body` holding back the wakes its `execute` calls owe sleeping loops, then wakes each of those loops
    /// once.
    ///
    /// For a thread that answers many calls at a time (the settings writer answers a round of saves): without it
    /// the first answer wakes the loop, which on a shared core can preempt the answering thread at once, run that
    /// one answer and go back to sleep, to be woken again by the next. Jobs are queued as usual inside `body`; only
    /// the eventfd writes wait, so keep `body` short. Nested calls share the outermost batch.
    @discardableResult
    public static func coalescingWakes<Result>(_ body: () throws -> Result) rethrows -> Result {
        if WakeBatch.current != nil {
            return try body()
        }
        let batch = WakeBatch()
        defer { batch.wakeAll() }
        return try WakeBatch.$current.withValue(batch) { try body() }
    }
}

/// The loops owed a wake by the thread inside `EventLoop.coalescingWakes`.
final class WakeBatch: @unchecked Sendable {
    // @unchecked Sendable: bound by `coalescingWakes` as a task-local value, which outside a task belongs to the
    // calling thread, so only that thread reads or writes `loops`.
    @TaskLocal static var current: WakeBatch?

    private var loops: [EventLoop] = []

    /// Records that `loop` was found asleep with a job queued for it.
    func add(_ loop: EventLoop) {
        loops.append(loop)
    }

    func wakeAll() {
        for loop in loops {
            loop.epoll.wake()
        }
        loops.removeAll()
    }
}
