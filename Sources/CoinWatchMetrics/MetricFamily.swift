/// One metric as a scrape reports it: a name, its help text and type, and its samples.
///
/// Collectors build these from their own counters when asked (`MetricsCollector.collect`); nothing here is
/// touched by a hot path.
public struct MetricFamily: Sendable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    public var name: String
    public var help: String
    public var kind: Kind
    /// The samples of a counter or gauge.
    public var samples: [MetricSample]
    /// The samples of a histogram.
    public var histograms: [HistogramSample]

    public init(name: String, help: String, kind: Kind, samples: [MetricSample] = [], histograms: [HistogramSample] = []) {
        precondition(MetricNames.isValidMetricName(name), "invalid metric name '\(name)'")
        self.name = name
        self.help = help
        self.kind = kind
        self.samples = samples
        self.histograms = histograms
    }

    /// A counter family.
    public static func counter(_ name: String, help: String, _ samples: [MetricSample]) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .counter, samples: samples)
    }

    /// A gauge family.
    public static func gauge(_ name: String, help: String, _ samples: [MetricSample]) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .gauge, samples: samples)
    }
}

/// A label: name and value. Order is kept as given.
public struct MetricLabel: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        precondition(MetricNames.isValidLabelName(name), "invalid label name '\(name)'")
        self.name = name
        self.value = value
    }
}

/// One value of a counter or gauge.
public struct MetricSample: Sendable {
    public var labels: [MetricLabel]
    public var value: Double

    public init(_ labels: [MetricLabel] = [], _ value: Double) {
        self.labels = labels
        self.value = value
    }

    public init(_ labels: [MetricLabel] = [], _ value: UInt64) {
        self.init(labels, Double(value))
    }

    public init(_ labels: [MetricLabel] = [], _ value: Int) {
        self.init(labels, Double(value))
    }
}

/// One histogram: bucket upper bounds with the count of observations at or below each (cumulative), and
/// the count and sum of all observations. The `+Inf` bucket is `count`.
public struct HistogramSample: Sendable {
    public var labels: [MetricLabel]
    public var upperBounds: [Double]
    public var cumulativeCounts: [UInt64]
    public var count: UInt64
    public var sum: Double

    public init(labels: [MetricLabel], upperBounds: [Double], cumulativeCounts: [UInt64], count: UInt64, sum: Double) {
        precondition(upperBounds.count == cumulativeCounts.count, "one cumulative count per bucket")
        self.labels = labels
        self.upperBounds = upperBounds
        self.cumulativeCounts = cumulativeCounts
        self.count = count
        self.sum = sum
    }
}

/// The name rules of the Prometheus data model.
public enum MetricNames {
    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    public static func isValidMetricName(_ name: String) -> Bool {
        valid(name, allowColon: true)
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved).
    public static func isValidLabelName(_ name: String) -> Bool {
        valid(name, allowColon: false) && !name.hasPrefix("__")
    }

    private static func valid(_ name: String, allowColon: Bool) -> Bool {
        guard let first = name.utf8.first else { return false }
        func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7a || byte == 0x5f }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        guard isLetter(first) || (allowColon && first == 0x3a) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || isDigit($0) || (allowColon && $0 == 0x3a) }
    }
}
