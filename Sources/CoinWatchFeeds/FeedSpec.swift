import CoinWatchModel
public import CoinWatchService
import Foundation

/// Which feed `coinwatchd` runs, as given on its command line:
///
/// - `none`: no feed; prices come only from `PublishPrices`;
/// - `sim`, `sim:SEED`, `sim@RATE`, `sim:SEED@RATE`: the simulated market (seed 1, 10 ticks/s per symbol by
///   default);
/// - `replay:FILE`, `replay:FILE@SPEED`, `replay:FILE@SPEED,loop`, `replay:FILE@loop`: a recorded file at SPEED
///   times the recorded pace (default 1; `0` or `max` = as fast as possible), optionally looping. A path that
///   itself contains `@` needs an explicit `@SPEED`.
public enum FeedSpec: Sendable, Hashable, CustomStringConvertible {
    case none
    case simulated(SimulatedFeed.Configuration)
    case replay(path: String, options: ReplayFeed.Options)

    /// The accepted forms, for usage text and errors.
    public static let syntax = "none | sim[:SEED][@TICKS_PER_SECOND] | replay:FILE[@SPEED][,loop]"

    public init(parsing text: String) throws(FeedError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        func invalid(_ reason: String) -> FeedError {
            FeedError(code: .invalidSpec, message: "feed '\(text)': \(reason); expected \(Self.syntax)")
        }
        if trimmed == "none" {
            self = .none
            return
        }
        if trimmed == "sim" || trimmed.hasPrefix("sim:") || trimmed.hasPrefix("sim@") {
            var configuration = SimulatedFeed.Configuration()
            var rest = trimmed.dropFirst(3)
            if let at = rest.lastIndex(of: "@") {
                let rateText = rest[rest.index(after: at)...]
                guard let rate = Double(rateText), rate.isFinite, rate > 0, rate <= SimulatedFeed.maxTicksPerSecond
                else {
                    throw invalid("the rate after '@' must be ticks per second per symbol, greater than 0 and at most "
                        + "\(Int(SimulatedFeed.maxTicksPerSecond)) (got '\(rateText)')")
                }
                configuration.ticksPerSecond = rate
                rest = rest[..<at]
            }
            if rest.hasPrefix(":") {
                let seedText = rest.dropFirst()
                guard let seed = UInt64(seedText) else {
                    throw invalid(
                        "the seed after 'sim:' must be a whole number from 0 to \(UInt64.max) (got '\(seedText)')")
                }
                configuration.seed = seed
            } else if !rest.isEmpty {
                throw invalid("unexpected '\(rest)' after 'sim'")
            }
            self = .simulated(configuration)
            return
        }
        if trimmed.hasPrefix("replay:") {
            var path = trimmed.dropFirst("replay:".count)
            var options = ReplayFeed.Options()
            if let at = path.lastIndex(of: "@") {
                var suffix = path[path.index(after: at)...]
                if suffix == "loop" {
                    options.loop = true
                    suffix = ""
                } else if suffix.hasSuffix(",loop") {
                    options.loop = true
                    suffix = suffix.dropLast(",loop".count)
                }
                if !suffix.isEmpty {
                    options.speed = try Self.speed(suffix, invalid)
                }
                path = path[..<at]
            }
            guard !path.isEmpty else { throw invalid("the replay file is missing") }
            self = .replay(path: String(path), options: options)
            return
        }
        throw invalid(trimmed.isEmpty ? "empty" : "unknown feed")
    }

    private static func speed(_ text: Substring, _ invalid: (String) -> FeedError) throws(FeedError) -> Double {
        if text == "max" { return 0 }
        let number = text.hasSuffix("x") ? text.dropLast() : text
        guard let speed = Double(number), speed.isFinite, speed >= 0 else {
            throw invalid("the speed after '@' must be a number ≥ 0 (0 or 'max' = as fast as possible), optionally "
                + "followed by ',loop' (got '\(text)')")
        }
        return speed
    }

    /// Creates the feed, publishing into `hub`; it does not run until `start()`.
    public func makeFeed(hub: PriceHub) throws(FeedError) -> any PriceFeed {
        switch self {
        case .none:
            return NoFeed()
        case .simulated(let configuration):
            return try SimulatedFeed(hub: hub, configuration: configuration)
        case .replay(let path, let options):
            return try ReplayFeed(hub: hub, path: path, options: options)
        }
    }

    public var description: String {
        switch self {
        case .none:
            return "none"
        case .simulated(let configuration):
            return "sim:\(configuration.seed)@\(configuration.ticksPerSecond)"
        case .replay(let path, let options):
            return "replay:\(path)@\(options.speed)\(options.loop ? ",loop" : "")"
        }
    }
}
