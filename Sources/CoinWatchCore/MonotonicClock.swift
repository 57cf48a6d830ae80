#if canImport(Glibc)
import Glibc
#endif

/// The process's monotonic clock: `CLOCK_MONOTONIC`, the clock the event loops' timerfds run on.
///
/// Every interval and deadline kept as an integer reads it (loop timers, keepalive, feed pacing, rate limits,
/// benchmarks), so they all agree with the timers that fire them. It never goes back and never jumps with the wall
/// clock; it says nothing about the date (`WallClock` does).
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary point fixed at boot.
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        // clock_gettime(2): fills the caller's timespec; CLOCK_MONOTONIC cannot fail with a valid pointer.
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
    }
}
