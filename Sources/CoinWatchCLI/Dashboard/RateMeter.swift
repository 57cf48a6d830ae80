import CoinWatchCore

/// Updates per second over a sliding window of whole seconds, in constant memory whatever the rate.
struct RateMeter: Sendable, Hashable {
    /// How many seconds the rate averages over.
    static let window = 10

    private var counts = [Int](repeating: 0, count: RateMeter.window)
    private var seconds = [Int](repeating: -1, count: RateMeter.window)

    init() {}

    /// Counts one update that arrived during `second` (whole seconds since the watch started).
    mutating func record(second: Int) {
        let slot = second % Self.window
        if seconds[slot] != second {
            seconds[slot] = second
            counts[slot] = 0
        }
        counts[slot] += 1
    }

    /// The average rate over the window ending at `elapsed` (time since the watch started); the window
    /// is shorter at the start so the first seconds are not under-reported.
    func perSecond(elapsed: Duration) -> Double {
        let now = Int(elapsed.components.seconds)
        var total = 0
        for slot in 0..<Self.window where seconds[slot] > now - Self.window && seconds[slot] <= now {
            total += counts[slot]
        }
        let length = min(Double(Self.window), max(1, elapsed.inSeconds))
        return Double(total) / length
    }
}
