import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import Dispatch
import Synchronization

/// What `PriceHub` found in the store at start.
public struct PriceLoadReport: Sendable, Hashable {
    /// The last prices read back, by symbol.
    public var prices: [PriceTick] = []
    /// Stored entries that were skipped, each with the reason (key and problem).
    public var skipped: [String] = []

    public init(prices: [PriceTick] = [], skipped: [String] = []) {
        self.prices = prices
        self.skipped = skipped
    }
}

/// Writes the hub's last prices to LevelDB in the background: once per interval, only the symbols that changed,
/// as one non-synced `WriteBatch`. A tick never waits for the disk; a crash loses at most one interval of
/// last prices, which the feed replaces within seconds anyway.
///
/// Layout: `price:<SYMBOL>` → a serialized `coinwatch.v1.Tick`.
final class PricePersistence: Sendable {
    static let keyPrefix: [UInt8] = Array("price:".utf8)

    /// The most skipped-entry reasons a load report keeps.
    static let maxReportedSkips = 20

    let database: Database
    let interval: Duration
    private let queue = DispatchQueue(label: "coinwatch.price-persistence")
    private let state = Mutex(State())

    private struct State {
        var collect: (@Sendable (UInt64) -> (UInt64, [PriceTick]))?
        /// Hub version up to which prices are on disk.
        var savedVersion: UInt64 = 0
        var stopped = false
        var writes = 0
        var failures = 0
        var lastError: StoreError?
    }

    init(database: Database, interval: Duration) {
        self.database = database
        self.interval = interval
    }

    static func key(_ symbol: Symbol) -> [UInt8] {
        keyPrefix + Array(symbol.rawValue.utf8)
    }

    /// Reads every `price:` entry; entries that do not decode or validate are skipped and reported.
    static func load(from database: Database, limit: Int) throws(StoreError) -> PriceLoadReport {
        var report = PriceLoadReport()
        var skippedCount = 0
        func skip(_ reason: String) {
            skippedCount += 1
            if report.skipped.count < maxReportedSkips { report.skipped.append(reason) }
        }
        for entry in try database.scan(prefix: keyPrefix) {
            let name = String(decoding: entry.key.dropFirst(keyPrefix.count), as: UTF8.self)
            let tick: V1.Tick
            do {
                tick = try V1.Tick(serializedBytes: entry.value)
            } catch {
                skip("price:\(name): not a coinwatch.v1.Tick: \(error.message)")
                continue
            }
            let price: PriceTick
            do {
                price = try PriceWire.priceTick(tick, field: "price:\(name)", nowMs: 0)
            } catch {
                skip(error.description)
                continue
            }
            guard price.symbol.rawValue == name else {
                skip("price:\(name): holds a tick for \(price.symbol)")
                continue
            }
            guard report.prices.count < limit else {
                skip("price:\(name): more than \(limit) symbols stored")
                continue
            }
            report.prices.append(price)
        }
        if skippedCount > report.skipped.count {
            report.skipped.append("… and \(skippedCount - report.skipped.count) more")
        }
        return report
    }

    /// Starts the periodic writer; `collect` returns the prices changed since a hub version, and the current one.
    func start(collect: @escaping @Sendable (UInt64) -> (UInt64, [PriceTick])) {
        state.withLock { $0.collect = collect }
        scheduleNext()
    }

    private func scheduleNext() {
        let nanoseconds = max(1_000_000, interval.inNanoseconds)
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [weak self] in
            guard let self, !self.state.withLock({ $0.stopped }) else { return }
            self.writeChanges(sync: false)
            self.scheduleNext()
        }
    }

    /// Stops the writer and writes what changed since its last run, synced. Blocks until done.
    func stop() {
        state.withLock { $0.stopped = true }
        queue.sync { writeChanges(sync: true) }
        state.withLock { $0.collect = nil }
    }

    var statistics: (writes: Int, failures: Int, lastError: StoreError?) {
        state.withLock { ($0.writes, $0.failures, $0.lastError) }
    }

    /// On `queue`.
    private func writeChanges(sync: Bool) {
        let (collect, savedVersion) = state.withLock { ($0.collect, $0.savedVersion) }
        guard let collect else { return }
        let (version, changed) = collect(savedVersion)
        guard !changed.isEmpty else {
            state.withLock { $0.savedVersion = version }
            return
        }
        var batch = WriteBatch()
        for tick in changed {
            batch.put(Self.key(tick.symbol), PriceWire.tick(tick).serializedBytes())
        }
        do {
            try database.write(batch, sync: sync)
            state.withLock {
                $0.savedVersion = version
                $0.writes += 1
            }
        } catch {
            // Kept unsaved: the next run retries everything changed since `savedVersion`.
            state.withLock {
                $0.failures += 1
                $0.lastError = error
            }
        }
    }
}
