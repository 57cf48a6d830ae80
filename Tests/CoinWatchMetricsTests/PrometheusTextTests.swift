import Testing
@testable import CoinWatchMetrics

/// The text format 0.0.4, byte for byte: HELP and TYPE lines, escaping, cumulative histogram buckets.
@Suite struct PrometheusTextTests {
    @Test("counters and gauges, with escaped help and label values")
    func countersAndGauges() {
        let text = PrometheusText.render([
            .counter("requests_total", help: "Requests seen.\nBy path \\ method.", [
                MetricSample([MetricLabel("path", "/a\"b"), MetricLabel("note", "x\\y\nz")], 3),
                MetricSample([], 0),
            ]),
            .gauge("temperature", help: "Now.", [MetricSample([MetricLabel("room", "hall")], -1.5)]),
        ])
        #expect(text == """
            # HELP requests_total Requests seen.\\nBy path \\\\ method.
            # TYPE requests_total counter
            requests_total{path="/a\\"b",note="x\\\\y\\nz"} 3
            requests_total 0
            # HELP temperature Now.
            # TYPE temperature gauge
            temperature{room="hall"} -1.5

            """)
    }

    @Test("a histogram: cumulative buckets, +Inf, sum and count")
    func histogram() {
        let layout = HistogramLayout(upperBounds: [0.005, 0.1])
        #expect(layout.bucket(nanos: 0) == 0)
        #expect(layout.bucket(nanos: 5_000_000) == 0)
        #expect(layout.bucket(nanos: 5_000_001) == 1)
        #expect(layout.bucket(nanos: 2_000_000_000) == 2)
        let sample = layout.sample(labels: [MetricLabel("m", "x")], bucketCounts: [2, 1, 4], sumNanos: 1_500_000_000)
        let text = PrometheusText.render([MetricFamily(name: "latency_seconds", help: "Latency.", kind: .histogram,
                                                       histograms: [sample])])
        #expect(text == """
            # HELP latency_seconds Latency.
            # TYPE latency_seconds histogram
            latency_seconds_bucket{m="x",le="0.005"} 2
            latency_seconds_bucket{m="x",le="0.1"} 3
            latency_seconds_bucket{m="x",le="+Inf"} 7
            latency_seconds_sum{m="x"} 1.5
            latency_seconds_count{m="x"} 7

            """)
    }

    @Test("numbers: whole values plainly, special values by name")
    func numbers() {
        #expect(PrometheusText.number(0) == "0")
        #expect(PrometheusText.number(12_345_678_901) == "12345678901")
        #expect(PrometheusText.number(0.25) == "0.25")
        #expect(PrometheusText.number(.infinity) == "+Inf")
        #expect(PrometheusText.number(-.infinity) == "-Inf")
        #expect(PrometheusText.number(.nan) == "NaN")
    }

    @Test("names follow the data model")
    func names() {
        #expect(MetricNames.isValidMetricName("grpc_server_started_total"))
        #expect(MetricNames.isValidMetricName("a:b"))
        #expect(!MetricNames.isValidMetricName("9lives"))
        #expect(!MetricNames.isValidMetricName("has-dash"))
        #expect(MetricNames.isValidLabelName("grpc_code"))
        #expect(!MetricNames.isValidLabelName("__reserved"))
        #expect(!MetricNames.isValidLabelName("a:b"))
    }
}
