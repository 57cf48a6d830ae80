import Dispatch
import Testing
@testable import CoinWatchMetrics

@Suite struct MetricsRegistryTests {
    @Test("families with the same name from several collectors are merged in registration order")
    func mergesFamilies() {
        let registry = MetricsRegistry()
        registry.register(MetricsClosure {
            [.counter("calls_total", help: "Calls.", [MetricSample([MetricLabel("transport", "native")], 1)])]
        })
        registry.register(MetricsClosure {
            [.counter("calls_total", help: "Ignored.", [MetricSample([MetricLabel("transport", "grpc")], 2)]),
             .gauge("open", help: "Open.", [MetricSample([], 5)])]
        })
        #expect(registry.render() == """
            # HELP calls_total Calls.
            # TYPE calls_total counter
            calls_total{transport="native"} 1
            calls_total{transport="grpc"} 2
            # HELP open Open.
            # TYPE open gauge
            open 5

            """)
    }

    @Test("counter cells: each writer's block summed, read from another thread")
    func counterCells() {
        let blocks = (0..<4).map { _ in CounterCells(count: 3) }
        DispatchQueue.concurrentPerform(iterations: blocks.count) { index in
            let block = blocks[index]
            let cell = block.cell(at: 2)
            for _ in 0..<10_000 {
                block.increment(at: 0)
                cell.add(2)
            }
        }
        #expect(blocks.reduce(0) { $0 + $1.load(at: 0) } == 40_000)
        #expect(blocks.reduce(0) { $0 + $1.load(at: 1) } == 0)
        #expect(blocks.reduce(0) { $0 + $1.load(at: 2) } == 80_000)
    }
}
