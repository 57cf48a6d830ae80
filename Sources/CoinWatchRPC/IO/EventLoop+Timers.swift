import CoinWatchCore

extension EventLoop {
    /// Runs `body` on this loop once `delay` has passed (CLOCK_MONOTONIC).
    ///
    /// Timers with the same deadline run in the order they were scheduled. One timerfd per loop is
    /// armed for the earliest deadline only, so scheduling and cancelling cost no syscall unless the
    /// earliest deadline moves earlier. Loop thread only.
    @discardableResult
    public func scheduleTimer(after delay: Duration, _ body: @escaping () -> Void) -> TimerHandle {
        scheduleTimer(afterNanoseconds: delay.inNanoseconds, body)
    }

    /// Like ``scheduleTimer(after:_:)`` with a delay in nanoseconds (negative = now).
    @discardableResult
    public func scheduleTimer(afterNanoseconds delay: Int64, _ body: @escaping () -> Void) -> TimerHandle {
        assertInEventLoop()
        let now = MonotonicClock.nanoseconds()
        let (sum, overflow) = now.addingReportingOverflow(max(0, delay))
        let deadline = overflow ? Int64.max - 1 : sum
        let handle = timers.schedule(deadline: deadline, body)
        if deadline < armedTimerDeadline {
            armedTimerDeadline = deadline
            epoll.armTimer(deadline: deadline)
        }
        return handle
    }

    /// Cancels a timer that has not fired; returns false if it already fired or was cancelled.
    /// O(1): the heap entry is dropped lazily. Loop thread only.
    @discardableResult
    public func cancelTimer(_ handle: TimerHandle) -> Bool {
        assertInEventLoop()
        return timers.cancel(handle)
    }

    /// Number of pending timers (for diagnostics and tests). Loop thread only.
    public var pendingTimerCount: Int {
        assertInEventLoop()
        return timers.count
    }

    /// Runs every timer due now, then re-arms the timerfd for the next one.
    func runExpiredTimers() {
        // The timerfd is one-shot, so after firing it is disarmed.
        armedTimerDeadline = Int64.max
        let now = MonotonicClock.nanoseconds()
        let mark = timers.sequenceMark
        while let body = timers.popExpired(now: now, sequenceLimit: mark) {
            body()
        }
        if let next = timers.earliestDeadline(), next != armedTimerDeadline {
            armedTimerDeadline = next
            epoll.armTimer(deadline: next)
        }
    }
}
