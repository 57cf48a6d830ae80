import CoinWatchCommandLine
import CoinWatchModel
import CoinWatchPush

/// coinwatchd's APNs options. Delivery is on when the four that identify the key and the app are given, off
/// when none is; anything in between is a usage error, so a typo never silently turns delivery off.
struct PushOptions {
    static let all: [OptionSpec] = [
        OptionSpec("apns-key-file", .value(placeholder: "FILE"), environment: "COINWATCH_APNS_KEY_FILE",
                   help: "APNs signing key (AuthKey_<key id>.p8 from Apple). With --apns-key-id, --apns-team-id and "
                       + "--apns-topic it turns push delivery on."),
        OptionSpec("apns-key-id", .value(placeholder: "ID"), environment: "COINWATCH_APNS_KEY_ID",
                   help: "The key's id (the kid of every provider token)."),
        OptionSpec("apns-team-id", .value(placeholder: "TEAM"), environment: "COINWATCH_APNS_TEAM_ID",
                   help: "The Apple developer team id (the iss of every provider token)."),
        OptionSpec("apns-topic", .value(placeholder: "BUNDLE_ID"), environment: "COINWATCH_APNS_TOPIC",
                   help: "The app's bundle id, the apns-topic of devices registered without one."),
        OptionSpec("apns-endpoint", .value(placeholder: "URL"), environment: "COINWATCH_APNS_ENDPOINT",
                   help: "APNs host (default \(APNsConfiguration.productionEndpoint), or the sandbox host with "
                       + "--apns-sandbox); point it at a mock for tests."),
        OptionSpec("apns-sandbox", .flag, environment: "COINWATCH_APNS_SANDBOX",
                   help: "Deliver through the APNs sandbox (development builds of the app), to devices registered "
                       + "with environment SANDBOX."),
        OptionSpec("apns-connections", .value(placeholder: "N"), environment: "COINWATCH_APNS_CONNECTIONS",
                   help: "HTTP/2 connections to APNs, each carrying as many streams as APNs allows (default 1)."),
        OptionSpec("apns-token-refresh", .value(placeholder: "DURATION"), environment: "COINWATCH_APNS_TOKEN_REFRESH",
                   help: "Age at which the provider token is replaced (default 40m; APNs wants 20m to 60m)."),
        OptionSpec("alert-expiry", .value(placeholder: "DURATION"), environment: "COINWATCH_ALERT_EXPIRY", default: "1h",
                   help: "Undelivered alerts older than this are dropped (and sent to APNs with this expiration)."),
        OptionSpec("alert-hysteresis", .value(placeholder: "PERCENT"), environment: "COINWATCH_ALERT_HYSTERESIS",
                   default: "0.5",
                   help: "How far back past its threshold, in percent of it, a price must go before a side that fired "
                       + "can fire again (at least 0, below 100). Every node of a cluster should use the same."),
    ]

    /// The four options that identify the key and the app.
    static let required = ["apns-key-file", "apns-key-id", "apns-team-id", "apns-topic"]
    /// Options that mean something only with delivery on.
    static let dependent = ["apns-endpoint", "apns-sandbox", "apns-connections", "apns-token-refresh"]

    /// The APNs settings, nil when delivery is off.
    var apns: APNsConfiguration?
    var keyFile: String?
    var caFile: String?
    var alertExpiry: Duration
    /// The hysteresis band as a fraction (0.5 % is 0.005).
    var alertHysteresis: ExactDecimal

    init(_ parsed: ParsedArguments) throws(UsageError) {
        alertExpiry = try parsed.value("alert-expiry", as: "a duration such as 30m or 1h", DurationText.parse)!
        guard alertExpiry >= .seconds(1) else { throw UsageError("--alert-expiry: must be at least 1s") }
        alertHysteresis = try Self.hysteresis(parsed["alert-hysteresis"] ?? "0.5")
        // --ca-file is declared with the feed options (one option: wss:// venues and APNs trust the same CAs).
        caFile = parsed["ca-file"].flatMap { $0.isEmpty ? nil : $0 }
        let given = Self.required.filter { !(parsed[$0] ?? "").isEmpty }
        guard !given.isEmpty else {
            if let stray = Self.dependent.first(where: { parsed[$0] != nil || parsed.has($0) }) {
                throw UsageError("--\(stray) needs APNs delivery: give --\(Self.required.joined(separator: ", --")) too")
            }
            return
        }
        let missing = Self.required.filter { !given.contains($0) }
        guard missing.isEmpty else {
            throw UsageError(
                "APNs delivery needs --\(Self.required.joined(separator: ", --")); missing --"
                    + missing.joined(separator: ", --"))
        }
        let sandbox = parsed.has("apns-sandbox")
        let environment: APNsConfiguration.Environment = sandbox ? .sandbox : .production
        var configuration = APNsConfiguration(
            endpoint: parsed["apns-endpoint"].flatMap { $0.isEmpty ? nil : $0 } ?? APNsConfiguration.endpoint(for: environment),
            environment: environment, defaultTopic: parsed["apns-topic"]!, keyID: parsed["apns-key-id"]!,
            teamID: parsed["apns-team-id"]!)
        if let connections = try parsed.value("apns-connections", as: "a whole number 1–64", { Int($0) }) {
            configuration.connections = connections
        }
        if let refresh = try parsed.value("apns-token-refresh", as: "a duration such as 40m", DurationText.parse) {
            configuration.tokenRefresh = refresh
        }
        configuration.caFile = caFile
        do {
            try configuration.validate()
        } catch {
            throw UsageError("APNs: \(error.message)")
        }
        apns = configuration
        keyFile = parsed["apns-key-file"]
    }

    /// The start-up line's word on delivery.
    var summary: String {
        guard let apns else { return "off (no APNs key configured)" }
        return "\(apns.endpoint) (\(apns.environment), topic \(apns.defaultTopic), key \(apns.keyID), "
            + "\(apns.connections) connection\(apns.connections == 1 ? "" : "s"))"
    }

    /// A percentage such as `0.5` or `0.5%` as the fraction the alert engine takes.
    static func hysteresis(_ text: String) throws(UsageError) -> ExactDecimal {
        let digits = text.hasSuffix("%") ? String(text.dropLast()) : text
        guard let percent = ExactDecimal(digits), !percent.isNegative, percent < ExactDecimal(mantissa: 100, scale: 0)!,
            let fraction = ExactDecimal(mantissa: percent.mantissa, scale: percent.scale + 2)
        else {
            throw UsageError("--alert-hysteresis: '\(text)' is not a percentage from 0 to below 100, such as 0.5")
        }
        return fraction
    }
}
