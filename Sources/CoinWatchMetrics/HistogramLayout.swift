/// The bucket bounds of a latency histogram, kept in nanoseconds for the recording side and in seconds for
/// the scrape. A class, so recording an observation borrows the bounds instead of retaining them.
public final class HistogramLayout: Sendable {
    /// Upper bounds in seconds, ascending (the `+Inf` bucket is implied).
    public let upperBounds: [Double]
    /// The same bounds in nanoseconds.
    public let upperBoundNanos: [Int64]

    public init(upperBounds: [Double]) {
        precondition(zip(upperBounds, upperBounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend")
        self.upperBounds = upperBounds
        self.upperBoundNanos = upperBounds.map { Int64(($0 * 1e9).rounded()) }
    }

    /// The buckets the gRPC ecosystem's Prometheus middleware uses for `grpc_server_handling_seconds`
    /// (Prometheus's default buckets), so existing dashboards read ours unchanged.
    public static let grpcHandling = HistogramLayout(upperBounds: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

    /// Buckets including `+Inf`.
    public var bucketCount: Int { upperBounds.count + 1 }

    /// The bucket of an observation of `nanos` (the last index is `+Inf`).
    @inlinable
    public func bucket(nanos: Int64) -> Int {
        var index = 0
        while index < upperBoundNanos.count && nanos > upperBoundNanos[index] { index += 1 }
        return index
    }

    /// Turns per-bucket counts (including `+Inf`) into a histogram sample.
    public func sample(labels: [MetricLabel], bucketCounts: [UInt64], sumNanos: UInt64) -> HistogramSample {
        precondition(bucketCounts.count == bucketCount, "one count per bucket")
        var cumulative: [UInt64] = []
        cumulative.reserveCapacity(upperBounds.count)
        var running: UInt64 = 0
        for index in upperBounds.indices {
            running &+= bucketCounts[index]
            cumulative.append(running)
        }
        running &+= bucketCounts[upperBounds.count]
        return HistogramSample(labels: labels, upperBounds: upperBounds, cumulativeCounts: cumulative, count: running,
                               sum: Double(sumNanos) / 1e9)
    }
}
