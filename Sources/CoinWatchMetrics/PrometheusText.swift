/// The Prometheus text exposition format, version 0.0.4.
///
/// Per family: `# HELP name text` (backslash and newline escaped), `# TYPE name kind`, then one line per
/// sample: `name{label="value",…} number`, label values escaped (backslash, double quote, newline). A
/// histogram is written as cumulative `name_bucket{…,le="bound"}` lines ending with `le="+Inf"`, then
/// `name_sum` and `name_count`. Numbers are Go-parsable floats: integers without a fraction, `+Inf`,
/// `-Inf`, `NaN`.
public enum PrometheusText {
    /// The `Content-Type` of a scrape answered in this format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public static func render(_ families: [MetricFamily]) -> String {
        var out = ""
        out.reserveCapacity(families.count * 256)
        for family in families {
            out += "# HELP \(family.name) \(escapeHelp(family.help))\n"
            out += "# TYPE \(family.name) \(family.kind.rawValue)\n"
            switch family.kind {
            case .counter, .gauge:
                for sample in family.samples {
                    out += family.name
                    out += labelSet(sample.labels)
                    out += " \(number(sample.value))\n"
                }
            case .histogram:
                for histogram in family.histograms {
                    for (bound, count) in zip(histogram.upperBounds, histogram.cumulativeCounts) {
                        out += "\(family.name)_bucket"
                        out += labelSet(histogram.labels + [MetricLabel("le", number(bound))])
                        out += " \(count)\n"
                    }
                    out += "\(family.name)_bucket"
                    out += labelSet(histogram.labels + [MetricLabel("le", "+Inf")])
                    out += " \(histogram.count)\n"
                    out += "\(family.name)_sum\(labelSet(histogram.labels)) \(number(histogram.sum))\n"
                    out += "\(family.name)_count\(labelSet(histogram.labels)) \(histogram.count)\n"
                }
            }
        }
        return out
    }

    static func labelSet(_ labels: [MetricLabel]) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.map { "\($0.name)=\"\(escapeLabelValue($0.value))\"" }.joined(separator: ",") + "}"
    }

    /// Backslash, double quote and line feed escaped, as label values require.
    public static func escapeLabelValue(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x5c || $0 == 0x22 || $0 == 0x0a }) else { return value }
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// Backslash and line feed escaped, as HELP text requires.
    public static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// A number as Prometheus parses it: whole values without a fraction or exponent (up to 2^53),
    /// the rest in Swift's shortest round-tripping form.
    public static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return "\(value)"
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard contains(target) else { return self }
        return split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
