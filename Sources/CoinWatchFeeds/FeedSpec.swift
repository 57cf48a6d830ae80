public import CoinWatchLogging
import CoinWatchModel
public import CoinWatchService
import Foundation

/// Which price sources `coinwatchd` runs, as given to `--feed`: `none`, or a comma-separated list of
///
/// - `sim`, `sim:SEED`, `sim@RATE`, `sim:SEED@RATE`: the simulated market (seed 1, 10 ticks/s per symbol by
///   default);
/// - `replay:FILE`, `replay:FILE@SPEED`, `replay:FILE@SPEED,loop`, `replay:FILE@loop`: a recorded file at SPEED
///   times the recorded pace (default 1; `0` or `max` = as fast as possible), optionally looping. A path that
///   itself contains `@` needs an explicit `@SPEED`; a path may not contain a comma;
/// - `finnhub`, `binance`, `coinbase` (`coinbase:ticker` for the ticker channel instead of matches), `kraken`
///   (`kraken:ticker` for the ticker channel instead of trades): live venues.
///
/// Each source appears at most once. Several sources quoting one symbol are combined by `PriceAggregator`.
public struct FeedSpec: Sendable, Hashable, CustomStringConvertible {
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        case simulated(SimulatedFeed.Configuration)
        case replay(path: String, options: ReplayFeed.Options)
        case finnhub
        case binance
        case coinbase(CoinbaseVenue.Channel)
        case kraken(KrakenVenue.Channel)

        /// The source's name in logs and health: `sim`, `replay`, or the venue.
        public var name: String {
            switch self {
            case .simulated: "sim"
            case .replay: "replay"
            case .finnhub: "finnhub"
            case .binance: "binance"
            case .coinbase: "coinbase"
            case .kraken: "kraken"
            }
        }

        public var isVenue: Bool {
            switch self {
            case .simulated, .replay: false
            case .finnhub, .binance, .coinbase, .kraken: true
            }
        }

        public var description: String {
            switch self {
            case .simulated(let configuration):
                "sim:\(configuration.seed)@\(configuration.ticksPerSecond)"
            case .replay(let path, let options):
                "replay:\(path)@\(options.speed)\(options.loop ? ",loop" : "")"
            case .finnhub, .binance:
                name
            case .coinbase(let channel):
                channel == .matches ? name : "\(name):\(channel.rawValue)"
            case .kraken(let channel):
                channel == .trade ? name : "\(name):\(channel.rawValue)"
            }
        }
    }

    /// The sources in the order given; empty for `none`.
    public var sources: [Source]

    public init(sources: [Source]) {
        self.sources = sources
    }

    public static let none = FeedSpec(sources: [])

    public static func simulated(_ configuration: SimulatedFeed.Configuration) -> FeedSpec {
        FeedSpec(sources: [.simulated(configuration)])
    }

    public static func replay(path: String, options: ReplayFeed.Options) -> FeedSpec {
        FeedSpec(sources: [.replay(path: path, options: options)])
    }

    /// The accepted forms, for usage text and errors.
    public static let syntax = "none, or a comma-separated list of sim[:SEED][@TICKS_PER_SECOND], "
        + "replay:FILE[@SPEED][,loop], finnhub, binance, coinbase[:ticker], kraken[:ticker]"

    public var hasVenues: Bool { sources.contains(where: \.isVenue) }

    public init(parsing text: String) throws(FeedError) {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        func invalid(_ item: String, _ reason: String) -> FeedError {
            FeedError(code: .invalidSpec, message: "feed '\(item)': \(reason); expected \(Self.syntax)")
        }
        if items.count == 1 && items[0] == "none" {
            self = .none
            return
        }
        var sources: [Source] = []
        for item in items {
            if item == "loop", case .replay(let path, var options)? = sources.last {
                guard !options.loop else { throw invalid(item, "'loop' given twice") }
                options.loop = true
                sources[sources.count - 1] = .replay(path: path, options: options)
                continue
            }
            if item == "none" { throw invalid(item, "'none' cannot be combined with other sources") }
            let source = try Self.source(item, invalid)
            guard !sources.contains(where: { $0.name == source.name }) else {
                throw invalid(item, "\(source.name) is already in the list (each source at most once)")
            }
            sources.append(source)
        }
        self.sources = sources
    }

    private static func source(_ item: String, _ invalid: (String, String) -> FeedError) throws(FeedError) -> Source {
        func fail(_ reason: String) -> FeedError { invalid(item, reason) }
        switch item {
        case "finnhub": return .finnhub
        case "binance": return .binance
        case "coinbase", "coinbase:matches": return .coinbase(.matches)
        case "coinbase:ticker": return .coinbase(.ticker)
        case "kraken", "kraken:trade": return .kraken(.trade)
        case "kraken:ticker": return .kraken(.ticker)
        default: break
        }
        if item == "sim" || item.hasPrefix("sim:") || item.hasPrefix("sim@") {
            var configuration = SimulatedFeed.Configuration()
            var rest = item.dropFirst(3)
            if let at = rest.lastIndex(of: "@") {
                let rateText = rest[rest.index(after: at)...]
                guard let rate = Double(rateText), rate.isFinite, rate > 0, rate <= SimulatedFeed.maxTicksPerSecond
                else {
                    throw fail("the rate after '@' must be ticks per second per symbol, greater than 0 and at most "
                        + "\(Int(SimulatedFeed.maxTicksPerSecond)) (got '\(rateText)')")
                }
                configuration.ticksPerSecond = rate
                rest = rest[..<at]
            }
            if rest.hasPrefix(":") {
                let seedText = rest.dropFirst()
                guard let seed = UInt64(seedText) else {
                    throw fail("the seed after 'sim:' must be a whole number from 0 to \(UInt64.max) (got '\(seedText)')")
                }
                configuration.seed = seed
            } else if !rest.isEmpty {
                throw fail("unexpected '\(rest)' after 'sim'")
            }
            return .simulated(configuration)
        }
        if item.hasPrefix("replay:") {
            var path = item.dropFirst("replay:".count)
            var options = ReplayFeed.Options()
            if let at = path.lastIndex(of: "@") {
                let suffix = path[path.index(after: at)...]
                if suffix == "loop" {
                    options.loop = true
                } else {
                    options.speed = try speed(suffix, fail)
                }
                path = path[..<at]
            }
            guard !path.isEmpty else { throw fail("the replay file is missing") }
            return .replay(path: String(path), options: options)
        }
        if let venue = item.split(separator: ":").first, Venues.names.contains(String(venue)) {
            throw fail("unknown channel for \(venue)")
        }
        throw fail(item.isEmpty ? "empty" : "unknown feed")
    }

    private static func speed(_ text: Substring, _ fail: (String) -> FeedError) throws(FeedError) -> Double {
        if text == "max" { return 0 }
        let number = text.hasSuffix("x") ? text.dropLast() : text
        guard let speed = Double(number), speed.isFinite, speed >= 0 else {
            throw fail("the speed after '@' must be a number ≥ 0 (0 or 'max' = as fast as possible), optionally "
                + "followed by ',loop' (got '\(text)')")
        }
        return speed
    }

    /// Creates the feed, publishing into `hub`; it does not run until `start()`.
    public func makeFeed(
        hub: PriceHub, configuration: FeedSet.Configuration = FeedSet.Configuration(), logger: Logger = .disabled
    ) throws(FeedError) -> any PriceFeed {
        guard !sources.isEmpty else { return NoFeed() }
        return try FeedSet(spec: self, hub: hub, configuration: configuration, logger: logger)
    }

    public var description: String {
        sources.isEmpty ? "none" : sources.map(\.description).joined(separator: ",")
    }
}
