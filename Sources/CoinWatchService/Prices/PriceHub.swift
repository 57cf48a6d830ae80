public import CoinWatchModel
public import CoinWatchProto
import CoinWatchRPC
public import CoinWatchStore
import Synchronization

/// The latest price of every symbol, fanned out to any number of `StreamPrices` calls.
///
/// Feeds and `PublishPrices` call `publish` from any thread. The hub keeps the latest price per symbol, hands the
/// batch to the alert hook, and appends it to the mailbox of each event loop that has streams, posting at most one
/// job per loop; each loop's `LoopPriceFanout` encodes each tick once for all its streams and sends every tick to
/// the streams that keep up. A loop that falls behind by more than `Configuration.maxQueuedTicksPerLoop` ticks
/// conflates its backlog to the latest price per symbol; slow streams hold at most one pending price per symbol and
/// are ended after `Configuration.slowSubscriberTimeout`. With a database, the last prices survive a restart.
///
/// ```swift
/// let hub = try PriceHub(database: db, onTicks: { ticks in alerts.evaluate(ticks) })
/// let server = try RPCServer(configuration: config, methods: hub.methods + others)
/// try server.start()
/// let feed = try FeedSpec(parsing: "sim").makeFeed(hub: hub)   // CoinWatchFeeds
/// feed.start()
/// // shutdown: feed.stop(); await server.shutdownGracefully(); hub.close(); db.close()
/// ```
public final class PriceHub: Sendable {
    public let configuration: Configuration
    /// Symbols and prices read from the store at start, and the stored entries that could not be used.
    public let loadReport: PriceLoadReport

    let onTicks: (@Sendable ([PriceTick]) -> Void)?
    /// Serialises publishers, so the alert hook and every loop see ticks in one order.
    private let publishOrder = Mutex<Void>(())
    let state: Mutex<PriceHubState>
    let counters = PriceHubCounters()
    private let persistence: PricePersistence?
    /// Where `publish` sends ticks instead of fanning them out here (cluster mode's price bus); nil on a single node.
    private let upstream = Mutex<(any PriceUpstream)?>(nil)

    /// Creates the hub, loading the last prices from `database` (if given) so a stream started right after a
    /// restart gets its snapshot at once.
    ///
    /// - Parameter onTicks: the alert engine's hook. It receives every published tick (the full stream, never the
    ///   conflated one), in publish order, synchronously on the thread that called `publish` (a feed's thread, or
    ///   the event loop that runs `PublishPrices`), one publisher at a time, including the stale ticks of
    ///   `markStale` (`PriceTick.isStale`), which are no new price. It must be quick, must not call `publish`
    ///   itself and must not wait for an event loop (a loop may be waiting to publish).
    public init(
        configuration: Configuration = Configuration(), database: Database? = nil,
        onTicks: (@Sendable ([PriceTick]) -> Void)? = nil
    ) throws(StoreError) {
        self.configuration = configuration
        self.onTicks = onTicks
        var initial = PriceHubState()
        if let database {
            loadReport = try PricePersistence.load(from: database, limit: configuration.maxKnownSymbols)
            for tick in loadReport.prices {
                initial.latest[tick.symbol] = LatestPrice(price: tick.price, timeMs: tick.timeMs, version: 0)
            }
            persistence = PricePersistence(database: database, interval: configuration.persistInterval)
        } else {
            loadReport = PriceLoadReport()
            persistence = nil
        }
        state = Mutex(initial)
        persistence?.start { [weak self] savedVersion in
            self?.changedPrices(since: savedVersion) ?? (savedVersion, [])
        }
    }

    // MARK: Publishing

    /// Applies `ticks` in order: each becomes its symbol's latest price (last writer wins).
    ///
    /// Any thread. Ticks for a new symbol beyond `maxKnownSymbols` are refused; after `close()` everything is.
    /// With an upstream (`route(through:)`), the ticks go there instead and come back through `deliver` — on this
    /// node as on every other. The symbol limit is applied before they go, against this node's symbols (every
    /// node's hub holds the same ones), so a publisher learns of a refusal in cluster mode too.
    /// - Returns: how many ticks were applied (with an upstream: handed to it).
    @discardableResult
    public func publish(_ ticks: [PriceTick]) -> Int {
        guard !ticks.isEmpty else { return 0 }
        if let upstream = upstream.withLock({ $0 }) {
            let maxSymbols = configuration.maxKnownSymbols
            let accepted = state.withLock { state -> [PriceTick] in
                state.isClosed ? [] : Self.withinSymbolLimit(ticks, known: state.latest, max: maxSymbols)
            }
            if accepted.count < ticks.count {
                counters.refusedTicks.add(ticks.count - accepted.count, ordering: .relaxed)
            }
            if !accepted.isEmpty { upstream.publish(accepted) }
            return accepted.count
        }
        return deliver(ticks)
    }

    /// Sends every later `publish` to `upstream` (cluster mode: the price bus, which delivers each tick to every
    /// node's hub through `deliver`). Set once, before the feed starts and before the server serves.
    public func route(through upstream: any PriceUpstream) {
        self.upstream.withLock { $0 = upstream }
    }

    /// Applies `ticks` here: the latest prices, the alert hook and this node's streams. What `publish` does on a
    /// single node; in cluster mode the price bus calls it with the ticks every node receives.
    @discardableResult
    public func deliver(_ ticks: [PriceTick]) -> Int {
        guard !ticks.isEmpty else { return 0 }
        let maxSymbols = configuration.maxKnownSymbols
        return publishOrder.withLock { _ -> Int in
            let outcome = state.withLock { state -> (UInt64, [PriceTick], [LoopPriceFanout])? in
                guard !state.isClosed else { return nil }
                state.version += 1
                let version = state.version
                let accepted = Self.withinSymbolLimit(ticks, known: state.latest, max: maxSymbols)
                for tick in accepted {
                    state.latest[tick.symbol] = LatestPrice(
                        price: tick.price, timeMs: tick.timeMs, version: version, sources: tick.sources,
                        isStale: tick.isStale)
                }
                var targets: [LoopPriceFanout] = []
                for index in state.fanouts.indices where state.subscriberCounts[index] > 0 {
                    targets.append(state.fanouts[index])
                }
                return (version, accepted, targets)
            }
            guard let (version, applied, targets) = outcome else {
                counters.refusedTicks.add(ticks.count, ordering: .relaxed)
                return 0
            }
            if applied.count < ticks.count {
                counters.refusedTicks.add(ticks.count - applied.count, ordering: .relaxed)
            }
            guard !applied.isEmpty else { return 0 }
            counters.publishedTicks.add(applied.count, ordering: .relaxed)
            deliver(applied, version: version, to: targets)
            return applied.count
        }
    }

    /// Marks symbols stale: no source quotes them any more. Each symbol that has a price and is not stale already
    /// keeps its last price and time but is flagged, and goes to streams and to the alert hook as one stale tick
    /// (`PriceTick.isStale`), so every stream gets exactly one update saying so. The next `publish` of the symbol
    /// clears the flag.
    ///
    /// Any thread, like `publish`. With an upstream the stale ticks go there, as `publish`'s ticks do, so every
    /// node's streams and alert engine see the symbol turn stale, and come back through `deliver`.
    /// - Returns: how many symbols turned stale.
    @discardableResult
    public func markStale(_ symbols: [Symbol]) -> Int {
        guard !symbols.isEmpty else { return 0 }
        if let upstream = upstream.withLock({ $0 }) {
            let stale = state.withLock { state -> [PriceTick] in
                guard !state.isClosed else { return [] }
                return symbols.compactMap { Self.staleTick($0, state.latest[$0]) }
            }
            if !stale.isEmpty { upstream.publish(stale) }
            return stale.count
        }
        return publishOrder.withLock { _ -> Int in
            let outcome = state.withLock { state -> (UInt64, [PriceTick], [LoopPriceFanout])? in
                guard !state.isClosed else { return nil }
                var stale: [PriceTick] = []
                for symbol in symbols {
                    guard var latest = state.latest[symbol], let tick = Self.staleTick(symbol, latest) else { continue }
                    if stale.isEmpty { state.version += 1 }
                    latest.isStale = true
                    latest.version = state.version
                    state.latest[symbol] = latest
                    stale.append(tick)
                }
                var targets: [LoopPriceFanout] = []
                for index in state.fanouts.indices where state.subscriberCounts[index] > 0 {
                    targets.append(state.fanouts[index])
                }
                return (state.version, stale, targets)
            }
            guard let (version, stale, targets) = outcome, !stale.isEmpty else { return 0 }
            deliver(stale, version: version, to: targets)
            return stale.count
        }
    }

    /// `ticks` less those for new symbols past `max` known ones, a new symbol counted once however often the batch
    /// names it: the rule `deliver` applies, in one place so that `publish` to an upstream refuses what every
    /// node's hub would. `ticks` itself when nothing can be refused.
    private static func withinSymbolLimit(_ ticks: [PriceTick], known: [Symbol: LatestPrice], max: Int) -> [PriceTick] {
        guard known.count + ticks.count > max else { return ticks }
        var count = known.count
        var added = Set<Symbol>()
        return ticks.filter { tick in
            if known[tick.symbol] != nil || added.contains(tick.symbol) { return true }
            guard count < max else { return false }
            count += 1
            added.insert(tick.symbol)
            return true
        }
    }

    /// The tick that says `symbol` turned stale: its last price and time, no sources; nil without a price or when
    /// it is stale already.
    private static func staleTick(_ symbol: Symbol, _ latest: LatestPrice?) -> PriceTick? {
        guard let latest, !latest.isStale else { return nil }
        return PriceTick(symbol: symbol, price: latest.price, timeMs: latest.timeMs, sources: 0, isStale: true)
    }

    /// Hands an applied batch to every loop with streams and to the alert hook. Under `publishOrder`.
    private func deliver(_ applied: [PriceTick], version: UInt64, to targets: [LoopPriceFanout]) {
        // Publishing from an event loop (PublishPrices): that loop wakes the others at the end of its
        // current round of events, so all the publishes it reads together reach them as one drain, and
        // it fans out to its own streams only after waking them (they work in parallel).
        let publishingLoop = targets.first { $0.loop.inEventLoop }
        for fanout in targets where fanout !== publishingLoop {
            fanout.post(applied, version: version, deferringWakeTo: publishingLoop?.loop)
        }
        publishingLoop?.post(applied, version: version, deferringWakeTo: nil)
        onTicks?(applied)
    }

    // MARK: Reading

    /// The latest price of each of `symbols` that has one (all known symbols when empty), ordered by symbol:
    /// the answer to `GetPrices`.
    public func snapshot(symbols: [Symbol] = []) -> [V1.Tick] {
        latestPrices(symbols: symbols).map(PriceWire.tick)
    }

    /// Like `snapshot`, as validated ticks.
    public func latestPrices(symbols: [Symbol] = []) -> [PriceTick] {
        let entries: [(Symbol, LatestPrice)] = state.withLock { state in
            if symbols.isEmpty { return state.latest.map { ($0.key, $0.value) } }
            return symbols.compactMap { symbol in state.latest[symbol].map { (symbol, $0) } }
        }
        var seen = Set<Symbol>()
        return entries
            .filter { seen.insert($0.0).inserted }
            .sorted { $0.0 < $1.0 }
            .map { PriceTick(symbol: $0.0, price: $0.1.price, timeMs: $0.1.timeMs, sources: $0.1.sources, isStale: $0.1.isStale) }
    }

    /// The latest price of one symbol.
    public func latestPrice(of symbol: Symbol) -> PriceTick? {
        state.withLock { state in
            state.latest[symbol].map {
                PriceTick(symbol: symbol, price: $0.price, timeMs: $0.timeMs, sources: $0.sources, isStale: $0.isStale)
            }
        }
    }

    /// Every symbol that has a price, sorted.
    public var knownSymbols: [Symbol] {
        state.withLock { Array($0.latest.keys) }.sorted()
    }

    /// Whether `close()` was called.
    public var isClosed: Bool {
        state.withLock { $0.isClosed }
    }

    /// Live `StreamPrices` calls across all loops.
    public var subscriberCount: Int {
        state.withLock { $0.subscriberCounts.reduce(0, +) }
    }

    // MARK: Streams

    /// Starts a stream on its connection's loop: registers it, takes the snapshot, hands both to the loop's fan-out.
    func subscribe(_ stream: ServerStream, _ subscription: StreamPricesSubscription) throws(RPCError) {
        let loop = stream.eventLoop
        let timeout = configuration.slowSubscriberTimeout
        let registered = state.withLock { state -> (LoopPriceFanout, [(Symbol, LatestPrice)], UInt64)? in
            guard !state.isClosed else { return nil }
            let index: Int
            if let existing = state.fanouts.firstIndex(where: { $0.loop === loop }) {
                index = existing
            } else {
                state.fanouts.append(LoopPriceFanout(
                    loop: loop, hub: self, slowSubscriberTimeout: timeout,
                    mailboxLimit: configuration.maxQueuedTicksPerLoop))
                state.subscriberCounts.append(0)
                index = state.fanouts.count - 1
            }
            state.subscriberCounts[index] += 1
            let snapshot: [(Symbol, LatestPrice)]
            if subscription.isWildcard {
                snapshot = state.latest.map { ($0.key, $0.value) }
            } else {
                snapshot = subscription.symbols.compactMap { symbol in state.latest[symbol].map { (symbol, $0) } }
            }
            return (state.fanouts[index], snapshot, state.version)
        }
        guard let (fanout, snapshot, version) = registered else {
            throw RPCError(code: .unavailable, message: "the price hub is shutting down")
        }
        fanout.subscribe(stream, subscription, snapshot: snapshot, version: version)
    }

    /// A fan-out dropped one of its streams.
    func subscriberRemoved(from fanout: LoopPriceFanout) {
        state.withLock { state in
            if let index = state.fanoutIndex(fanout) {
                state.subscriberCounts[index] -= 1
            }
        }
    }

    // MARK: Lifecycle

    /// Ends every stream with UNAVAILABLE, refuses further publishes and streams, and writes the last prices that
    /// changed since the last background write (synchronously). Does not close the database, which the caller owns.
    public func close() {
        let fanouts = state.withLock { state -> [LoopPriceFanout]? in
            guard !state.isClosed else { return nil }
            state.isClosed = true
            return state.fanouts
        }
        guard let fanouts else { return }
        let reason = RPCError(code: .unavailable, message: "the price hub is shutting down")
        for fanout in fanouts {
            fanout.loop.execute { fanout.endAll(reason) }
        }
        persistence?.stop()
    }

    /// Prices set by publishes after `version`, and the current version (for the persistence writer).
    private func changedPrices(since version: UInt64) -> (UInt64, [PriceTick]) {
        state.withLock { state in
            guard state.version > version else { return (version, []) }
            var changed: [PriceTick] = []
            // A stale mark changes no price; writing it again is harmless.
            for (symbol, latest) in state.latest where latest.version > version {
                changed.append(PriceTick(symbol: symbol, price: latest.price, timeMs: latest.timeMs))
            }
            return (state.version, changed)
        }
    }
}
