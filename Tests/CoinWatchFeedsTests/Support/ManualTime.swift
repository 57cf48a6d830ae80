import CoinWatchCore
import CoinWatchModel
import CoinWatchService
import Synchronization
@testable import CoinWatchFeeds

/// A clock that moves only when a test says so.
final class ManualClock: FeedClock {
    private let nanos = Mutex<Int64>(1_000_000_000_000)
    let wallBase: Int64 = 1_718_000_000_000

    func monotonicNanos() -> Int64 { nanos.withLock { $0 } }

    func wallMs() -> Int64 { wallBase + monotonicNanos() / 1_000_000 }

    func advance(_ duration: Duration) {
        nanos.withLock { $0 += duration.inNanoseconds }
    }

    func set(_ value: Int64) {
        nanos.withLock { $0 = value }
    }
}

/// Timers on a `ManualClock`: `advance` moves the clock and runs what fell due, in order.
final class ManualScheduler: FeedScheduler {
    let manual = ManualClock()
    var clock: any FeedClock { manual }
    private var timers: [(id: UInt64, due: Int64, body: () -> Void)] = []
    private var nextID: UInt64 = 1

    func schedule(afterNanoseconds nanoseconds: Int64, _ body: @escaping () -> Void) -> FeedTimer {
        let id = nextID
        nextID += 1
        timers.append((id, manual.monotonicNanos() + max(0, nanoseconds), body))
        return FeedTimer(id: id)
    }

    func cancel(_ timer: FeedTimer) {
        timers.removeAll { $0.id == timer.id }
    }

    /// When the next timer is due, relative to now (nil: none pending).
    var nextDue: Int64? {
        timers.map(\.due).min().map { $0 - manual.monotonicNanos() }
    }

    var pendingCount: Int { timers.count }

    /// Moves time forward by `duration`, running every timer that falls due on the way, at its time.
    func advance(_ duration: Duration) {
        let end = manual.monotonicNanos() + duration.inNanoseconds
        while let next = timers.enumerated().filter({ $0.element.due <= end }).min(by: { $0.element.due < $1.element.due }) {
            let timer = timers.remove(at: next.offset)
            if timer.due > manual.monotonicNanos() { manual.set(timer.due) }
            timer.body()
        }
        manual.set(end)
    }
}

/// Prices a source published, in order.
final class RecordingSink: PriceSink {
    private let state = Mutex<[[PriceTickValue]]>([])

    struct PriceTickValue: Hashable, Sendable {
        var symbol: String
        var price: String
        var timeMs: Int64
        var sources: UInt32
    }

    func publish(_ ticks: [PriceTick]) -> Int {
        let values = ticks.map {
            PriceTickValue(symbol: $0.symbol.rawValue, price: $0.price.description, timeMs: $0.timeMs, sources: $0.sources)
        }
        state.withLock { $0.append(values) }
        return ticks.count
    }

    var batches: [[PriceTickValue]] { state.withLock { $0 } }
    var ticks: [PriceTickValue] { batches.flatMap { $0 } }
    var prices: [String] { ticks.map { "\($0.symbol) \($0.price)" } }
}
