import CoinWatchCommandLine
import CoinWatchModel

/// Every command the CLI has, in the order `coinwatch --help` lists them.
enum CommandCatalog {
    static let expectVersion = OptionSpec(
        "expect-version", .value(placeholder: "N"),
        help: "Only if the stored version is N (0 = the device has none yet); else ABORTED.")

    static let settingsGet = CommandSpec(
        ["settings", "get"], arguments: "DEVICE",
        summary: "Show a device's alert settings.",
        details: """
            Shows the alert settings stored for DEVICE: its version, when they last changed, and the below/above
            thresholds of each symbol. A device without settings is an error (NOT_FOUND).
            """,
        operands: [.device],
        examples: ["coinwatch settings get phone-1", "coinwatch settings get phone-1 --json"])

    static let settingsSet = CommandSpec(
        ["settings", "set"], arguments: "DEVICE SYMBOL",
        summary: "Set, change or remove one symbol's thresholds.",
        details: """
            Changes the alert rule of one SYMBOL of DEVICE; its other symbols keep theirs. A threshold not given
            keeps its current value, 0 turns that side off, and --off removes the symbol's rule. Prices are exact
            decimals (64250.5). Prints the settings as stored.
            """,
        options: [
            OptionSpec("below", .value(placeholder: "PRICE"),
                       help: "Alert when the price falls to or below PRICE (0 = off)."),
            OptionSpec("above", .value(placeholder: "PRICE"),
                       help: "Alert when the price rises to or above PRICE (0 = off)."),
            OptionSpec("off", .flag, help: "Remove the symbol's rule."),
            expectVersion,
        ],
        operands: [.device, .symbol],
        examples: [
            "coinwatch settings set phone-1 BTC --below 60000 --above 70000.5",
            "coinwatch settings set phone-1 BTC --above 0",
            "coinwatch settings set phone-1 ETH --off --expect-version 3",
        ])

    static let settingsDelete = CommandSpec(
        ["settings", "delete"], arguments: "DEVICE",
        summary: "Delete all of a device's settings.",
        details: "Deletes every rule of DEVICE. Deleting a device that has no settings is not an error.",
        options: [expectVersion],
        operands: [.device],
        examples: ["coinwatch settings delete phone-1"])

    static let prices = CommandSpec(
        ["prices"], arguments: "[SYMBOL...]",
        summary: "Show the latest prices.",
        details: "Shows the latest price of each SYMBOL (all symbols the server knows when none is given).",
        operands: [.symbols],
        examples: ["coinwatch prices", "coinwatch prices BTC ETH --json"])

    static let watch = CommandSpec(
        ["watch"], arguments: "[SYMBOL...]",
        summary: "Live price dashboard (one line per update when piped).",
        details: """
            Follows live prices of each SYMBOL (all symbols when none is given). On a terminal: a full-screen
            dashboard with the last price, the change since the watch started, a sparkline, ticks per second
            and the age of the last update; q or Ctrl-C quits. It reconnects by itself when the server goes away.
            Otherwise: one line per update (`BTC 64250.5 seq=12 time=…`), or one JSON object per line with --json.
            """,
        options: [
            OptionSpec("interval", .value(placeholder: "DURATION"), default: "0",
                       help: "At most one update per symbol per DURATION (e.g. 500ms, at most 1m); 0 = every change."),
            OptionSpec("only-changes", .flag, help: "Skip updates whose price did not change."),
        ],
        operands: [.symbols],
        examples: ["coinwatch watch", "coinwatch watch BTC ETH --interval 500ms", "coinwatch watch BTC --json | jq ."])

    static let publish = CommandSpec(
        ["publish"], arguments: "SYMBOL PRICE [SYMBOL PRICE...]",
        summary: "Push price ticks (for feeders and testing).",
        details: """
            Publishes one tick per SYMBOL PRICE pair, stamped with the server's clock. Servers started with
            --publish-token need --token.
            """,
        operands: [.symbolPricePairs],
        examples: ["coinwatch publish BTC 64250.5", "coinwatch publish BTC 64250.5 ETH 3120.25 --token secret"])

    static let alerts = CommandSpec(
        ["alerts"], arguments: "DEVICE",
        summary: "Follow a device's alerts as they fire.",
        details: "Prints the alerts of DEVICE as they fire (pending ones first), one line each; Ctrl-C stops.",
        operands: [.device],
        examples: ["coinwatch alerts phone-1", "coinwatch alerts phone-1 --json"])

    static let devicesRegister = CommandSpec(
        ["devices", "register"], arguments: "DEVICE TOKEN",
        summary: "Register a device's APNs token for push alerts.",
        details: """
            Registers TOKEN (the APNs device token as hex, 64–200 digits) for DEVICE, so its alerts are
            pushed to the phone through APNs. Registering again replaces the token and re-enables a device
            whose token APNs had refused. Tokens from a development build of the app come from the APNs
            sandbox: give --sandbox. Prints the registration as stored.
            """,
        options: [
            OptionSpec("sandbox", .flag, help: "The token comes from the APNs sandbox (a development build)."),
            OptionSpec("topic", .value(placeholder: "BUNDLE_ID"),
                       help: "The app's bundle id, when it is not the server's default topic."),
            OptionSpec("locale", .value(placeholder: "LOCALE"), help: "The device's locale, e.g. en-GB."),
        ],
        operands: [.device],
        examples: [
            "coinwatch devices register phone-1 740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad",
            "coinwatch devices register phone-1 740f4707…78ad --sandbox --topic com.example.coinwatch.dev",
        ])

    static let devicesShow = CommandSpec(
        ["devices", "show"], arguments: "DEVICE",
        summary: "Show a device's push registration and delivery state.",
        details: """
            Shows the APNs registration of DEVICE: its token, environment and topic, whether delivery is
            active or disabled (with APNs' reason and when), and the last alert APNs accepted. A device that
            is not registered is an error (NOT_FOUND).
            """,
        operands: [.device],
        examples: ["coinwatch devices show phone-1", "coinwatch devices show phone-1 --json"])

    static let devicesUnregister = CommandSpec(
        ["devices", "unregister"], arguments: "DEVICE",
        summary: "Stop pushing a device's alerts.",
        details: """
            Removes the push registration of DEVICE. Unregistering a device that is not registered is not
            an error.
            """,
        operands: [.device],
        examples: ["coinwatch devices unregister phone-1"])

    static let health = CommandSpec(
        ["health"],
        summary: "Check that the server is serving, its price sources and push delivery.",
        details: """
            Asks the server whether it is serving, and shows each price source: connected or not, its last
            message's age, messages per second, reconnects, gaps and rejected messages; and push delivery:
            whether it is on, how many alerts are queued, in flight, delivered, retried, expired and refused,
            and how many registered devices APNs disabled. Exits 0 when it is SERVING, 1 otherwise.
            """,
        examples: ["coinwatch health", "coinwatch health --json"])

    static let shell = CommandSpec(
        ["shell"],
        summary: "Interactive shell with history and completion.",
        details: """
            Runs commands typed without the `coinwatch` prefix, with line editing, history kept in
            ~/.coinwatch_history and Tab completion of commands, options and symbols. Ctrl-C returns from
            watch and alerts to the prompt; exit, quit or Ctrl-D leaves. Plain `coinwatch` on a terminal
            starts it too. Its exit status is the last line's, as a command's would be (64 for a line that
            cannot be read, such as an unclosed quote).
            """,
        examples: ["coinwatch shell", "coinwatch --server 10.0.0.5:7878"])

    static let help = CommandSpec(
        ["help"], arguments: "[COMMAND...]",
        summary: "Show help for a command.",
        details: "Shows the help of COMMAND (for example `help settings set`), or the overview without one.",
        operands: [.command],
        examples: ["coinwatch help settings set"])

    /// All commands, in help order.
    static let all: [CommandSpec] = [
        settingsGet, settingsSet, settingsDelete, prices, watch, publish, alerts, devicesRegister, devicesShow,
        devicesUnregister, health, shell, help,
    ]

    /// Commands whose first word is `word` (several for `settings`).
    static func commands(startingWith word: String) -> [CommandSpec] {
        all.filter { $0.words.first == word }
    }

    /// The first words of all commands, without repeats, in help order.
    static var topLevelWords: [String] {
        var seen = Set<String>()
        return all.map { $0.words[0] }.filter { seen.insert($0).inserted }
    }

    /// The usage lines of a group of commands such as `settings`.
    static func groupUsage(_ word: String) -> String {
        commands(startingWith: word).map(\.usage).joined(separator: "\n       ")
    }

    /// Help of a group (`coinwatch settings --help`): its commands with their summaries.
    static func groupHelp(_ word: String) -> String {
        let members = commands(startingWith: word)
        let width = members.map { "\($0.name) \($0.arguments)".count }.max() ?? 0
        let list = members.map { command -> String in
            let left = "\(command.name) \(command.arguments)"
            return "  \(left)\(String(repeating: " ", count: width - left.count))  \(command.summary)"
        }.joined(separator: "\n")
        return HelpText.render(
            usage: groupUsage(word),
            summary: "\(groupSummaries[word] ?? "Commands.") Run `coinwatch help \(word) COMMAND` for a command's options.",
            sections: [("COMMANDS", list)], optionGroups: [("GLOBAL OPTIONS", GlobalOptions.specs)])
    }

    /// What each group of commands is about, for its help.
    static let groupSummaries = [
        "settings": "Alert settings of devices.",
        "devices": "Push registrations (APNs tokens).",
    ]

    static let overviewUsage = """
        coinwatch [options] COMMAND [arguments]
               coinwatch [options]   (on a terminal: the interactive shell)
        """

    /// `coinwatch --help`: commands, global options, the JSON shapes and the exit statuses.
    static var overview: String {
        let width = all.map { "\($0.name) \($0.arguments)".count }.max() ?? 0
        let commandList = all.map { command -> String in
            let left = "\(command.name) \(command.arguments)"
            return "  \(left)\(String(repeating: " ", count: width - left.count))  \(command.summary)"
        }.joined(separator: "\n")
        return HelpText.render(
            usage: overviewUsage,
            summary: """
                Command-line client of coinwatchd: device alert settings, prices, live streams, and an interactive \
                shell.
                """,
            sections: [("COMMANDS", commandList)],
            optionGroups: [("OPTIONS", GlobalOptions.specs)],
            trailingSections: [("JSON OUTPUT", jsonSection), ("EXIT STATUS", exitSection)])
    }

    static let jsonSection = """
          --json prints one JSON object per result, and one object per line for streams (watch, alerts).
          Field names are stable. Prices and thresholds are JSON strings holding exact decimals ("64250.5"),
          never JSON numbers, so no parser rounds them through a float; a threshold that is off is null.
          Times are integers: milliseconds since the Unix epoch (0 = unset).
            settings get|set  {"device_id", "version", "updated_at_ms",
                               "rules": {SYMBOL: {"below", "above"}},
                               "device_secret" (set, only on a device's first save)}
            settings delete   {"device_id", "existed"}
            prices            {"prices": [{"symbol", "price", "time_ms"}]}
            watch             {"symbol", "price", "source_time_ms", "sequence", "stale" (only when true),
                               "sources" (only when counted)}
            publish           {"accepted"}
            alerts            {"id", "device_id", "symbol", "direction" ("above"|"below"), "threshold",
                               "price", "time_ms", "idempotency_key", "push_interest", "apns_collapse_id",
                               "apns_payload_json"}
            devices register|show
                              {"device_id", "apns_token", "environment" ("production"|"sandbox"), "topic",
                               "locale", "registered_at_ms", "status" ("active"|"disabled"),
                               "disabled_reason", "disabled_at_ms", "delivered", "last_delivered_alert_id",
                               "last_delivered_at_ms", "device_secret" (register, only when it claims the device)}
            devices unregister {"device_id", "existed"}
            health            {"status" ("SERVING"|"NOT_SERVING"|"UNKNOWN"), "server", "server_name",
                               "server_version", "feeds": [{"name", "connected", "last_message_age_ms",
                               "messages_per_second", "messages", "reconnects", "gaps", "rejected_messages",
                               "last_error"}], "push": {"enabled", "endpoint", "paused", "pause_reason",
                               "queued", "in_flight", "delivered", "retried", "expired", "rejected",
                               "registered_devices", "disabled_devices"},
                               "cluster" (only in cluster mode): {"node_id", "nats_state", "nats_server",
                               "members", "owned_shards", "runs_feed", "leases": [{"key", "age_ms",
                               "valid_for_ms", "token"}], "settings_revision", "settings_lag"}}
        """

    static let exitSection = """
          0    success
          1    the server answered with an error, printed as `error: CODE: message` (e.g. NOT_FOUND),
               or health found the server not SERVING
          3    the server could not be reached (check --server / COINWATCH_SERVER and that coinwatchd runs)
          64   bad usage: the message and the command's usage are printed
          130  interrupted with Ctrl-C
        """
}
