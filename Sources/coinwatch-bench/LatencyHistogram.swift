/// Latencies in microseconds, with exact percentiles.
///
/// Runs are seconds long at up to a few hundred thousand calls per second, so
/// keeping every sample (4 bytes each) is affordable and avoids bucket error.
struct LatencyHistogram {
    private(set) var samples: [UInt32] = []

    init(capacity: Int = 1 << 20) {
        samples.reserveCapacity(capacity)
    }

    mutating func record(nanoseconds: UInt64) {
        samples.append(UInt32(clamping: nanoseconds / 1000))
    }

    mutating func merge(_ other: LatencyHistogram) {
        samples.append(contentsOf: other.samples)
    }

    var count: Int { samples.count }

    /// The `fraction` quantile in milliseconds (nearest rank).
    func percentile(_ fraction: Double, sorted: [UInt32]) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))
        return Double(sorted[rank]) / 1000
    }
}

/// Formats milliseconds for humans and JSON alike.
func formatMillis(_ value: Double) -> String {
    let scaled = (value * 1000).rounded() / 1000
    return "\(scaled)"
}
