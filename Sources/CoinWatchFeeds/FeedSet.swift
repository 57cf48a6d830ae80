public import CoinWatchLogging
public import CoinWatchModel
import CoinWatchRPC
public import CoinWatchService
import CoinWatchTLS
import Dispatch
import Synchronization

/// Every price source of one `--feed` list, combined into one price per symbol by a `PriceAggregator` and
/// published into the hub.
///
/// Threads: `sim` and `replay` keep their own threads; the live venues share one event loop (`cw-feeds`), which
/// owns their sockets, their timers and the aggregator's age checks. Nothing a venue does blocks a server loop.
public final class FeedSet: PriceFeed {
    public struct Configuration: Sendable {
        /// What the venues subscribe to.
        public var symbols: [Symbol] = FeedSet.defaultSymbols
        /// Endpoints instead of the venues' own, by venue name (`--feed-url NAME=URL`).
        public var urls: [String: String] = [:]
        /// Finnhub's API token (a secret: it goes into the URL's query and never into a log line).
        public var finnhubToken: String?
        /// A PEM file of CAs trusted for `wss://` besides the system's.
        public var caFile: String?
        public var symbolMap = SymbolMap()
        public var aggregation = PriceAggregator.Configuration()
        /// Largest WebSocket message accepted from a venue.
        public var maxMessageBytes = 1 << 20
        public var backoff = Backoff.Configuration()
        /// Per venue, liveness instead of the venue's default.
        public var liveness: [String: VenueLiveness] = [:]
        public var handshakeTimeout: Duration = .seconds(15)
        public var userAgent = "coinwatchd"

        public init() {}
    }

    public static let defaultSymbols: [Symbol] = ["BTC", "ETH"].map { try! Symbol(validating: $0) }

    public let spec: FeedSpec
    public let configuration: Configuration
    public let aggregator: PriceAggregator
    public let symbols: [Symbol]
    private let locals: [any PriceFeed]
    private let venuePlans: [VenuePlan]
    /// The TLS client context of `wss://` venues (nil when none is configured).
    private let tlsContext: TLSContext?
    private let logger: Logger
    private let running = Mutex(Running())

    /// One venue as configured: its adapter, endpoint and subscriptions.
    struct VenuePlan: Sendable {
        let adapter: any VenueAdapter
        let url: WebSocketURL
        let instruments: [(instrument: String, symbol: Symbol)]
        let liveness: VenueLiveness
        let stats: SourceStatsRecorder
    }

    private struct Running {
        var phase = Phase.idle
        var loop: EventLoop?
        var venues: VenueSources?
        var sweepTimer: TimerHandle?

        enum Phase { case idle, running, stopped }
    }

    /// Checks the configuration and loads replay files; nothing runs until `start()`.
    public init(
        spec: FeedSpec, hub: PriceHub, configuration: Configuration = Configuration(), logger: Logger = .disabled,
        clock: any FeedClock = SystemFeedClock()
    ) throws(FeedError) {
        self.spec = spec
        self.configuration = configuration
        self.logger = logger
        for name in configuration.urls.keys where !spec.sources.contains(where: { $0.name == name }) {
            throw FeedError(
                code: .invalidSpec, message: "--feed-url names \(name), which is not in --feed (\(spec))")
        }
        var plans: [VenuePlan] = []
        var localSymbols: [Symbol] = []
        var locals: [any PriceFeed] = []
        let venueSymbols = configuration.symbols
        // The symbols some source will quote: those already in the hub turn stale if none does within the max age.
        var quoted = Set(spec.hasVenues ? venueSymbols : [])
        var adapters: [(FeedSpec.Source, any VenueAdapter)] = []
        for source in spec.sources {
            switch source {
            case .finnhub:
                guard let token = configuration.finnhubToken, !token.isEmpty else {
                    throw FeedError(
                        code: .invalidSpec,
                        message: "finnhub needs an API token (--finnhub-token or COINWATCH_FINNHUB_TOKEN)")
                }
                adapters.append((source, FinnhubVenue(token: token)))
            case .binance: adapters.append((source, BinanceVenue()))
            case .coinbase(let channel): adapters.append((source, CoinbaseVenue(channel: channel)))
            case .kraken(let channel): adapters.append((source, KrakenVenue(channel: channel)))
            case .simulated, .replay: break
            }
        }
        // Loaded before the aggregator exists, so a bad replay file fails before anything starts.
        var recordings: [String: ReplayRecording] = [:]
        for case .replay(let path, _) in spec.sources {
            let recording = try ReplayRecording.load(path: path)
            recordings[path] = recording
            quoted.formUnion(recording.symbols)
        }
        for case .simulated(let simulated) in spec.sources {
            quoted.formUnion(simulated.instruments.map(\.symbol))
        }
        let known = Set(hub.knownSymbols).intersection(quoted)
        aggregator = PriceAggregator(
            sink: hub, hub: hub, configuration: configuration.aggregation, clock: clock,
            knownSymbols: known.sorted())
        for source in spec.sources {
            switch source {
            case .simulated(let simulated):
                let feed = try SimulatedFeed(
                    publishingTo: aggregator.input(named: source.name), configuration: simulated, clock: clock)
                locals.append(feed)
                localSymbols += feed.symbols
            case .replay(let path, let options):
                let feed = try ReplayFeed(
                    publishingTo: aggregator.input(named: source.name), recording: recordings[path]!,
                    options: options, clock: clock)
                locals.append(feed)
                localSymbols += feed.symbols
            case .finnhub, .binance, .coinbase, .kraken:
                let adapter = adapters.first { $0.0 == source }!.1
                let urlText = configuration.urls[adapter.name] ?? adapter.defaultURL
                let url = try WebSocketURL(parsing: urlText)
                let instruments = venueSymbols.map { symbol in
                    (instrument: configuration.symbolMap.instrument(
                        venue: adapter.name, symbol: symbol, default: adapter.defaultInstrument), symbol: symbol)
                }
                plans.append(VenuePlan(
                    adapter: adapter, url: url, instruments: instruments,
                    liveness: configuration.liveness[adapter.name] ?? adapter.liveness,
                    stats: SourceStatsRecorder(name: adapter.name, clock: clock)))
            }
        }
        self.locals = locals
        venuePlans = plans
        tlsContext = try Self.tlsContext(for: plans, caFile: configuration.caFile)
        var seen = Set<Symbol>()
        symbols = (localSymbols + (plans.isEmpty ? [] : venueSymbols)).filter { seen.insert($0).inserted }
    }

    /// A client context that verifies certificates and host names against the system's CAs plus `caFile`, made
    /// once (reading the trust store) when a venue uses `wss://` or a CA file is given, so a bad file fails at start.
    private static func tlsContext(for plans: [VenuePlan], caFile: String?) throws(FeedError) -> TLSContext? {
        guard caFile != nil || plans.contains(where: { $0.url.isSecure }) else { return nil }
        do {
            return try TLSContext(.client(caFile: caFile))
        } catch {
            let file = caFile.map { " (CA file '\($0)')" } ?? ""
            throw FeedError(code: .tlsSetup, message: "cannot set up TLS for wss:// venues\(file): \(error.message)")
        }
    }

    /// Checks that `caFile` can be trusted for `wss://` venues (a PEM file of certificates), so a bad file is refused
    /// where the option is read.
    public static func checkCAFile(_ caFile: String) throws(FeedError) {
        _ = try tlsContext(for: [], caFile: caFile)
    }

    public var name: String {
        var parts = locals.map(\.name)
        for plan in venuePlans {
            parts.append("\(plan.adapter.name) \(plan.url.redacted)")
        }
        let combined = spec.sources.count > 1 ? "; median of fresh prices (max age \(configuration.aggregation.maxAge))" : ""
        return parts.joined(separator: ", ") + combined
    }

    /// Each source's state, in `--feed` order.
    public var sourceStats: [PriceSourceStats] {
        var byName: [String: PriceSourceStats] = [:]
        for feed in locals {
            for stats in feed.sourceStats { byName[stats.name] = stats }
        }
        for plan in venuePlans {
            byName[plan.adapter.name] = plan.stats.snapshot
        }
        return spec.sources.compactMap { byName[$0.name] }
    }

    public func start() {
        let begin = running.withLock { running -> Bool in
            guard running.phase == .idle else { return false }
            running.phase = .running
            return true
        }
        guard begin else { return }
        for feed in locals {
            feed.start()
        }
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "cw-feeds")
        } catch {
            logger.error("cannot start the feeds' event loop; live venues and price ageing are off", [
                "reason": "\(error)",
            ])
            return
        }
        running.withLock { $0.loop = loop }
        let plans = venuePlans
        let configuration = self.configuration
        let logger = self.logger
        let aggregator = self.aggregator
        loop.execute { [self] in
            let scheduler = EventLoopScheduler(loop: loop)
            let dialer = ConnectionDialer(
                loop: loop, tls: tlsContext, handshakeTimeout: configuration.handshakeTimeout, closeTimeout: .seconds(2))
            var venues: [VenueSource] = []
            for plan in plans {
                var venue = VenueSource.Configuration(url: plan.url, instruments: plan.instruments, liveness: plan.liveness)
                venue.backoff = configuration.backoff
                venue.maxMessageBytes = configuration.maxMessageBytes
                venue.handshakeTimeout = configuration.handshakeTimeout
                venue.userAgent = configuration.userAgent
                let source = VenueSource(
                    adapter: plan.adapter, configuration: venue, symbolMap: configuration.symbolMap,
                    sink: aggregator.input(named: plan.adapter.name), stats: plan.stats, scheduler: scheduler,
                    dialer: dialer, sha1: FeedCrypto.sha1, logger: logger.labeled("feeds"))
                venues.append(source)
                source.start()
            }
            running.withLock { $0.venues = VenueSources(venues) }
            scheduleSweep(loop)
        }
    }

    /// Ages prices on the loop: runs the aggregator's sweep when it says the next one is due (at least every
    /// second, so a newly quoted symbol is covered).
    private func scheduleSweep(_ loop: EventLoop) {
        let next = aggregator.sweep()
        let now = aggregator.clock.monotonicNanos()
        let wait = min(max(next == .max ? 1_000_000_000 : next - now, 10_000_000), 1_000_000_000)
        let handle = loop.scheduleTimer(afterNanoseconds: wait) { [weak self] in
            self?.scheduleSweep(loop)
        }
        running.withLock { $0.sweepTimer = handle }
    }

    /// Stops every source (venues send a close frame, bounded by a short timeout) and the feeds' loop.
    public func stop() {
        let (loop, venues) = running.withLock { running -> (EventLoop?, VenueSources?) in
            guard running.phase == .running else {
                running.phase = .stopped
                return (nil, nil)
            }
            running.phase = .stopped
            return (running.loop, running.venues)
        }
        for feed in locals {
            feed.stop()
        }
        guard let loop else { return }
        let done = DispatchSemaphore(value: 0)
        let submitted = loop.execute { [self] in
            if let timer = running.withLock({ $0.sweepTimer }) { _ = loop.cancelTimer(timer) }
            let sources = (venues ?? running.withLock { $0.venues })?.sources ?? []
            var remaining = sources.count
            guard remaining > 0 else {
                done.signal()
                return
            }
            for source in sources {
                source.stop {
                    remaining -= 1
                    if remaining == 0 { done.signal() }
                }
            }
        }
        if submitted {
            // Each source bounds its own close; this bounds the sum, whatever a venue does.
            _ = done.wait(timeout: .now() + .seconds(10))
        }
        loop.syncShutdownGracefully()
        for plan in venuePlans {
            plan.stats.update { $0.isConnected = false }
        }
    }
}

/// The venue sources of a running FeedSet: created on the feeds' loop and used only there, held under the set's lock
/// so `stop()` can hand them back to the loop.
final class VenueSources: @unchecked Sendable {
    // @unchecked Sendable: `sources` is set once, on the loop, and read only in jobs on that loop.
    let sources: [VenueSource]

    init(_ sources: [VenueSource]) {
        self.sources = sources
    }
}
