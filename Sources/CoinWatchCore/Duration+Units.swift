extension Duration {
    /// Whole nanoseconds, truncated toward zero; saturates at the `Int64` range instead of trapping (a
    /// `Duration` holds about ±10^20 seconds, an `Int64` of nanoseconds about ±292 years).
    ///
    /// The one conversion of a `Duration` to an integer count: timers, deadlines and intervals that the
    /// runtime keeps as integers all go through it (or `inMilliseconds`).
    @inlinable
    public var inNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return sumOverflow ? (seconds < 0 ? .min : .max) : sum
    }

    /// Whole milliseconds, truncated toward zero; saturates at the `Int64` range.
    @inlinable
    public var inMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return sumOverflow ? (seconds < 0 ? .min : .max) : sum
    }

    /// Seconds as a floating-point number, for rates and reports: never for money, deadlines or timers.
    @inlinable
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
