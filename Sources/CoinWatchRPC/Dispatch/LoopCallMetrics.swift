import CoinWatchMetrics

/// The `grpc_server_*` counters of one transport on one event loop: per method, calls started, messages
/// received and sent, calls handled per status code, and the handling-time histogram.
///
/// Only the owning loop writes them (single-writer cells, see `CounterCells`): a call pays a few plain
/// stores to its own loop's cache lines and never a locked instruction or a line shared with another core.
/// A scrape sums the loops. What a scrape can derive is not counted per call: a unary or server-stream call
/// receives exactly one request (received = started, plus the extra requests of a stream that takes
/// several), a unary call that ends OK sends exactly one response (sent = handled OK), and an inline
/// method's calls all take 0 s (its histogram is its handled count in the first bucket). So an inline call,
/// the hottest path, costs two cell updates: started and handled.
package final class LoopCallMetrics: Sendable {
    let cells: CounterCells
    let layout: HistogramLayout

    /// Per method: started, extra received, sent (streams), handled × codes, histogram buckets, sum of nanoseconds.
    static let started = 0
    static let extraReceived = 1
    static let sent = 2
    static let handled = 3
    /// gRPC's codes 0...16; a code outside them is counted as UNKNOWN.
    static let codeCount = 17
    static let buckets = handled + codeCount
    let sumOffset: Int
    let stride: Int

    init(methodCount: Int, layout: HistogramLayout) {
        self.layout = layout
        sumOffset = Self.buckets + layout.bucketCount
        stride = sumOffset + 1
        cells = CounterCells(count: max(1, methodCount * stride))
    }

    @inline(__always)
    package func started(_ method: Int) {
        cells.increment(at: method * stride + Self.started)
    }

    /// One more request message of a call already started (a stream that takes several).
    @inline(__always)
    package func received(_ method: Int) {
        cells.increment(at: method * stride + Self.extraReceived)
    }

    /// The cell counting a stream method's sent messages, for writers that count per message.
    func sentCell(_ method: Int) -> CounterCell {
        cells.cell(at: method * stride + Self.sent)
    }

    @inline(__always)
    static func codeIndex(_ code: RPCError.Code) -> Int {
        let raw = Int(code.rawValue)
        return raw >= 0 && raw < codeCount ? raw : 2
    }

    /// A call that is not inline ended with `code` after `nanos` of handling.
    @inline(__always)
    package func handled(_ method: Int, code: RPCError.Code, nanos: Int64) {
        let base = method * stride
        cells.increment(at: base + Self.handled + Self.codeIndex(code))
        cells.increment(at: base + Self.buckets + layout.bucket(nanos: nanos))
        if nanos > 0 { cells.add(UInt64(nanos), at: base + sumOffset) }
    }

    /// An inline call ended with `code` (its time is 0, its histogram derived: see above).
    @inline(__always)
    package func handledInline(_ method: Int, code: RPCError.Code) {
        cells.increment(at: method * stride + Self.handled + Self.codeIndex(code))
    }

    func load(_ method: Int, _ offset: Int) -> UInt64 {
        cells.load(at: method * stride + offset)
    }
}
