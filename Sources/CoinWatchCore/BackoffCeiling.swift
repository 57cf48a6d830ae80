/// The ceiling of a capped exponential backoff: `base × 2^doublings`, at most `cap`, in whatever unit the caller
/// counts in. The one growth rule behind every retry pause (a venue reconnecting, a push retried, a followed stream
/// reopened); each caller keeps its own jitter, since what each spreads out differs.
///
/// The shift is bounded and compared before it is made, so any number of failures neither overflows nor loops.
public enum BackoffCeiling {
    public static func of(base: Int64, cap: Int64, doublings: Int) -> Int64 {
        let exponent = min(max(doublings, 0), 40)
        return base > (cap >> exponent) ? cap : min(cap, base << exponent)
    }
}
