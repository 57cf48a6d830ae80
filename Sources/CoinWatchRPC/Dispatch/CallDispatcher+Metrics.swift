package import CoinWatchMetrics
import Synchronization

extension CallDispatcher {
    /// The names gRPC's Go status package gives the codes, which the `grpc_code` label of the gRPC ecosystem's
    /// Prometheus middleware uses; dashboards built for it read these series unchanged.
    static let codeLabels = [
        "OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
        "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
        "Internal", "Unavailable", "DataLoss", "Unauthenticated",
    ]

    /// `unary`, `server_stream` or `bidi_stream`, as the `grpc_type` label says.
    static func typeLabel(_ method: RPCMethod) -> String {
        switch method.kind {
        case .inline, .unary: "unary"
        case .serverStream: "server_stream"
        }
    }

    /// The `grpc_server_*` families of every transport (labelled `transport`), each method's loops summed,
    /// every series present from the start at 0; and the connections each transport has open and has accepted.
    package func metricFamilies() -> [MetricFamily] {
        var started: [MetricSample] = []
        var handled: [MetricSample] = []
        var received: [MetricSample] = []
        var sent: [MetricSample] = []
        var histograms: [HistogramSample] = []
        var open: [MetricSample] = []
        var accepted: [MetricSample] = []
        let bucketCount = histogram.bucketCount
        for transport in transports {
            open.append(MetricSample([MetricLabel("transport", transport.name)], transport.openConnectionCount))
            accepted.append(MetricSample([MetricLabel("transport", transport.name)],
                                         transport.acceptedConnections.load(ordering: .relaxed)))
            for index in 0..<methods.count {
                let method = methods[index]
                let (service, name) = MethodTable.split(method.path)
                let labels = [MetricLabel("grpc_type", Self.typeLabel(method)), MetricLabel("grpc_service", service),
                              MetricLabel("grpc_method", name)]
                let transportLabel = MetricLabel("transport", transport.name)
                var startedCount: UInt64 = 0
                var receivedCount: UInt64 = 0
                var sentCount: UInt64 = 0
                var codes = [UInt64](repeating: 0, count: LoopCallMetrics.codeCount)
                var buckets = [UInt64](repeating: 0, count: bucketCount)
                var sumNanos: UInt64 = 0
                for loop in transport.loopMetrics {
                    startedCount &+= loop.load(index, LoopCallMetrics.started)
                    receivedCount &+= loop.load(index, LoopCallMetrics.extraReceived)
                    sentCount &+= loop.load(index, LoopCallMetrics.sent)
                    for code in codes.indices { codes[code] &+= loop.load(index, LoopCallMetrics.handled + code) }
                    for bucket in buckets.indices { buckets[bucket] &+= loop.load(index, LoopCallMetrics.buckets + bucket) }
                    sumNanos &+= loop.load(index, loop.sumOffset)
                }
                // What the loops do not count per call (see LoopCallMetrics).
                receivedCount &+= startedCount
                switch method.kind {
                case .inline:
                    sentCount = codes[0]
                    buckets[0] &+= codes.reduce(0, &+)
                case .unary:
                    sentCount = codes[0]
                case .serverStream:
                    break
                }
                started.append(MetricSample(labels + [transportLabel], startedCount))
                received.append(MetricSample(labels + [transportLabel], receivedCount))
                sent.append(MetricSample(labels + [transportLabel], sentCount))
                for code in codes.indices {
                    handled.append(MetricSample(labels + [MetricLabel("grpc_code", Self.codeLabels[code]), transportLabel],
                                                codes[code]))
                }
                histograms.append(histogram.sample(labels: labels + [transportLabel], bucketCounts: buckets, sumNanos: sumNanos))
            }
        }
        return [
            .counter("grpc_server_started_total", help: "Calls started on the server, by method and transport.", started),
            .counter("grpc_server_handled_total",
                     help: "Calls completed on the server, by method, status code and transport.", handled),
            .counter("grpc_server_msg_received_total",
                     help: "Request messages received by the server, by method and transport.", received),
            .counter("grpc_server_msg_sent_total",
                     help: "Response messages sent by the server, by method and transport.", sent),
            MetricFamily(name: "grpc_server_handling_seconds", help: "Time from a call's start to its end, in seconds "
                         + "(calls answered inline from memory count as 0).", kind: .histogram, histograms: histograms),
            .gauge("coinwatch_connections_open", help: "Connections open, by transport.", open),
            .counter("coinwatch_connections_accepted_total",
                     help: "Connections accepted since start, by the transport they turned out to speak.", accepted),
        ]
    }
}
