import Glibc

/// The two clocks prices are measured with: the wall clock for time stamps, the monotonic clock for intervals and
/// deadlines. Public so that feeds stamp and pace ticks with the same clocks the hub uses.
public enum PriceClock {
    /// The wall clock in milliseconds since the Unix epoch: what a tick with `time_ms` 0 is stamped with.
    public static func nowMs() -> Int64 {
        var spec = timespec()
        // clock_gettime: fills the caller's timespec; CLOCK_REALTIME cannot fail with a valid pointer.
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    /// Monotonic nanoseconds, for intervals and deadlines (never for time stamps).
    public static func monotonicNanos() -> Int64 {
        var spec = timespec()
        // clock_gettime: fills the caller's timespec; CLOCK_MONOTONIC cannot fail with a valid pointer.
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
