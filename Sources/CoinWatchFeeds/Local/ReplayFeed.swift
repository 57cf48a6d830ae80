import CoinWatchCore
public import CoinWatchModel
public import CoinWatchService
import Synchronization

/// Replays recorded trades into the hub: the `replay:FILE` feed.
///
/// The recorded time stamps set the pace, divided by `speed` (0 = as fast as possible). Trades that fall due
/// together are published as one batch. Ticks are stamped with the time they are replayed at, so a replay looks
/// live to streams and to the alert engine (`restampTimes = false` keeps the recorded times). Without `loop` the
/// feed's thread ends after the last trade.
public final class ReplayFeed: PriceFeed {
    public struct Options: Sendable, Hashable {
        /// 1 = recorded pace, 10 = ten times faster, 0 = as fast as possible.
        public var speed: Double = 1
        /// Start over after the last trade.
        public var loop = false
        /// Stamp ticks with the replay time (true) or keep the recorded time.
        public var restampTimes = true
        /// Most trades in one publish.
        public var maxBatch = 512

        public init(speed: Double = 1, loop: Bool = false) {
            self.speed = speed
            self.loop = loop
        }
    }

    public let recording: ReplayRecording
    public let options: Options
    public let symbols: [Symbol]
    private let sink: any PriceSink
    private let thread = FeedThread(name: "cw-feed-replay")
    /// One message per replayed trade (a recorded exchange message carries one), so its rate compares with a
    /// live venue's.
    public let stats: SourceStatsRecorder
    private let published = Atomic<Int>(0)
    private let passes = Atomic<Int>(0)

    /// Loads and parses `path`; fails if it cannot be read or holds no usable trade.
    public convenience init(
        publishingTo sink: any PriceSink, path: String, options: Options = Options(),
        clock: any FeedClock = SystemFeedClock()
    ) throws(FeedError) {
        try self.init(publishingTo: sink, recording: ReplayRecording.load(path: path), options: options, clock: clock)
    }

    /// - Parameter sink: the hub, or the aggregator's input for this source.
    public init(
        publishingTo sink: any PriceSink, recording: ReplayRecording, options: Options = Options(),
        clock: any FeedClock = SystemFeedClock()
    ) throws(FeedError) {
        guard options.speed >= 0, options.speed.isFinite else {
            throw FeedError(code: .invalidSpec, message: "replay speed must be a number ≥ 0 (got \(options.speed))")
        }
        guard !recording.events.isEmpty else {
            var message = "replay file \(recording.source) holds no usable trade"
            if let first = recording.warnings.first { message += " (\(first))" }
            throw FeedError(code: .empty, message: message)
        }
        self.sink = sink
        stats = SourceStatsRecorder(name: "replay", clock: clock)
        self.recording = recording
        self.symbols = recording.symbols
        var options = options
        options.maxBatch = max(1, options.maxBatch)
        self.options = options
    }

    public var name: String {
        let pace = options.speed == 0 ? "as fast as possible" : "at \(options.speed)× recorded speed"
        return "replay \(recording.source) (\(recording.events.count) trades, \(recording.format.rawValue), "
            + "\(recording.skippedLines) lines skipped) \(pace)\(options.loop ? ", looping" : "")"
    }

    /// Ticks published so far.
    public var publishedTicks: Int { published.load(ordering: .relaxed) }

    /// Times the whole recording was replayed.
    public var completedPasses: Int { passes.load(ordering: .relaxed) }

    public var sourceStats: [PriceSourceStats] { [stats.snapshot] }

    public func start() {
        stats.update { $0.isConnected = true }
        thread.start { [self] thread in
            run(thread)
            stats.update { $0.isConnected = false }
        }
    }

    public func stop() {
        thread.stop()
        stats.update { $0.isConnected = false }
    }

    /// Waits for a non-looping replay to finish (true), or until `timeout` passes (false).
    public func waitUntilFinished(timeout: Duration) -> Bool {
        thread.waitUntilFinished(timeout: timeout)
    }

    private func run(_ thread: FeedThread) {
        let events = recording.events
        let speed = options.speed
        repeat {
            let start = MonotonicClock.nanoseconds()
            let firstTime = events[0].timeMs
            var latestTime = firstTime
            /// When an event falls due: recorded offsets divided by the speed; a time stamp that goes backwards
            /// counts as "at once".
            func due(_ event: ReplayEvent) -> Int64 {
                guard speed > 0 else { return start }
                let offset = Double(max(event.timeMs, latestTime) - firstTime) * 1e6 / speed
                return start + Int64(min(offset, 9e18))
            }
            var index = 0
            while index < events.count {
                if speed > 0 {
                    guard thread.sleep(untilMonotonicNanos: due(events[index])) else { return }
                } else if thread.isStopping {
                    return
                }
                let now = MonotonicClock.nanoseconds()
                let wallMs = WallClock.milliseconds()
                var batch: [PriceTick] = []
                while index < events.count, batch.count < options.maxBatch {
                    let event = events[index]
                    if !batch.isEmpty && due(event) > now { break }
                    batch.append(PriceTick(
                        symbol: event.symbol, price: event.price, timeMs: options.restampTimes ? wallMs : event.timeMs))
                    latestTime = max(latestTime, event.timeMs)
                    index += 1
                }
                let taken = sink.publish(batch)
                published.add(taken, ordering: .relaxed)
                stats.received(messages: batch.count, prices: taken)
            }
            passes.add(1, ordering: .relaxed)
        } while options.loop && !thread.isStopping
    }
}
