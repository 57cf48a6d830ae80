@testable import CoinWatchCLI
import CoinWatchCommandLine
import Testing
import CoinWatchModel
import CoinWatchProto

@Suite("Command lines")
struct DispatcherTests {
    func resolve(_ words: [String], environment: [String: String] = [:]) throws(CLIError) -> (String, ParsedArguments) {
        switch try Dispatcher.resolve(words, environment: environment) {
        case .command(let command, let parsed): return (command.name, parsed)
        case .overview: return ("--help", ParsedArguments())
        case .version: return ("--version", ParsedArguments())
        case .groupHelp(let word): return ("group " + word, ParsedArguments())
        case .none: return ("", ParsedArguments())
        }
    }

    @Test("global options may come before the command, its options anywhere after")
    func placement() throws {
        let (name, parsed) = try resolve(["--server", "h:1", "settings", "--json", "set", "dev", "BTC", "--below", "1"])
        #expect(name == "settings set")
        #expect(parsed.positionals == ["dev", "BTC"])
        #expect(parsed["server"] == "h:1")
        #expect(parsed["below"] == "1")
        #expect(parsed.has("json"))
    }

    @Test("the environment supplies global options")
    func environment() throws {
        let (_, parsed) = try resolve(["prices"], environment: ["COINWATCH_SERVER": "e:2", "COINWATCH_JSON": "1"])
        let options = try GlobalOptions(parsed)
        #expect(options.server == "e:2")
        #expect(options.json)
        #expect(options.timeout == .seconds(10))
    }

    @Test("help, version and groups")
    func special() throws {
        #expect(try resolve(["--help"]).0 == "--help")
        #expect(try resolve(["--version"]).0 == "--version")
        #expect(try resolve(["settings", "--help"]).0 == "group settings")
        #expect(try resolve(["settings", "get", "--help"]).0 == "settings get")
        #expect(try resolve([]).0 == "")
    }

    @Test("mistakes are usage errors with the right usage", arguments: [
        (["pricse"], "unknown command 'pricse' (did you mean 'prices'?)"),
        (["settings"], "missing settings command: get, set or delete"),
        (["settings", "gte", "x"], "unknown settings command 'gte' (did you mean 'get'?)"),
        (["prices", "--below", "1"], "unknown option '--below'"),
        (["--timeout", "soon", "health"], "--timeout: 'soon' is not a duration such as 500ms, 10s or 1m"),
    ])
    func mistakes(words: [String], message: String) throws {
        let error = try #require(throws: CLIError.self) {
            let (name, parsed) = try resolve(words)
            if name == "health" { _ = try usage(CommandCatalog.health) { () throws(UsageError) in try GlobalOptions(parsed) } }
        }
        #expect(error.code == .usage)
        #expect(error.message == message)
        #expect(error.usage != nil)
    }

    @Test("settings set reads exact prices and refuses contradictions")
    func ruleChange() throws {
        func change(_ words: [String]) throws -> SettingsCommand.RuleChange {
            let (_, parsed) = try resolve(["settings", "set"] + words)
            return try SettingsCommand.RuleChange(parsed)
        }
        let set = try change(["dev", "btc", "--below", "64250.50", "--expect-version", "0"])
        #expect(set.symbol == "BTC")
        #expect(set.below?.description == "64250.5")
        #expect(set.expectedVersion == 0)
        #expect(throws: UsageError.self) { try change(["dev", "BTC"]) }
        #expect(throws: UsageError.self) { try change(["dev", "BTC", "--off", "--above", "1"]) }
        #expect(throws: UsageError("--below: '1e5' is not a decimal number: only digits and one decimal point are allowed")) {
            try change(["dev", "BTC", "--below", "1e5"])
        }
        #expect(throws: UsageError("--above: a price cannot be negative (got -1)")) {
            try change(["dev", "BTC", "--above", "-1"])
        }
        #expect(throws: UsageError.self) { try change(["dev", "B!TC", "--above", "1"]) }
        #expect(throws: UsageError("unexpected argument 'extra'")) { try change(["dev", "BTC", "extra", "--off"]) }
    }

    @Test("merging keeps the side not given and turns zero off")
    func merge() throws {
        let (_, parsed) = try resolve(["settings", "set", "dev", "BTC", "--above", "0"])
        let change = try SettingsCommand.RuleChange(parsed)
        let current = V1AlertRuleFixture.rule(below: "60000", above: "70000")
        let merged = change.merged(with: current)
        #expect(merged.below?.description == "60000")
        #expect(merged.above == nil)
    }

    @Test("publish pairs")
    func publishPairs() throws {
        let ticks = try PricesCommand.readTicks(["btc", "64250.5", "ETH", "3120.25"])
        #expect(ticks.map(\.symbol) == ["BTC", "ETH"])
        #expect(ticks.map { DecimalDisplay.text($0.price) } == ["64250.5", "3120.25"])
        #expect(throws: UsageError("missing PRICE after 'ETH'")) { try PricesCommand.readTicks(["BTC", "1", "ETH"]) }
        #expect(throws: UsageError("missing SYMBOL PRICE")) { try PricesCommand.readTicks([]) }
    }

    @Test("finding the command word skips global options and their values")
    func commandIndex() {
        let specs = GlobalOptions.specs
        #expect(ParsedArguments.commandIndex(in: ["--server", "h:1", "--json", "prices"], options: specs) == 3)
        #expect(ParsedArguments.commandIndex(in: ["--server=h:1", "prices"], options: specs) == 1)
        #expect(ParsedArguments.commandIndex(in: ["--json"], options: specs) == nil)
        #expect(ParsedArguments.commandIndex(in: ["--", "--weird"], options: specs) == 1)
    }

    @Test("suggestions only for near misses")
    func suggestions() {
        #expect(Dispatcher.suggestion(for: "halth") == " (did you mean 'health'?)")
        #expect(Dispatcher.suggestion(for: "xyzzy") == "")
    }
}
