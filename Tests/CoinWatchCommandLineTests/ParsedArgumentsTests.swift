import CoinWatchCommandLine
import Testing

@Suite("ParsedArguments")
struct ParsedArgumentsTests {
    let options: [OptionSpec] = [
        OptionSpec("listen", .value(placeholder: "HOST:PORT"), environment: "COINWATCH_LISTEN", default: "127.0.0.1:7878",
                   help: "Address to listen on."),
        OptionSpec("json", .flag, environment: "COINWATCH_JSON", help: "JSON output."),
        OptionSpec("help", short: "h", .flag, help: "Help."),
    ]

    @Test("option beats environment beats default")
    func precedence() throws {
        let env = ["COINWATCH_LISTEN": "0.0.0.0:1"]
        #expect(try ParsedArguments.parse([], options: options)["listen"] == "127.0.0.1:7878")
        #expect(try ParsedArguments.parse([], options: options, environment: env)["listen"] == "0.0.0.0:1")
        #expect(try ParsedArguments.parse(["--listen", "h:2"], options: options, environment: env)["listen"] == "h:2")
        #expect(try ParsedArguments.parse(["--listen=h:3"], options: options, environment: env)["listen"] == "h:3")
    }

    @Test("a repeated option keeps every value in order; the last one is its single value")
    func repeated() throws {
        let parsed = try ParsedArguments.parse(["--listen", "a:1", "--listen=b:2"], options: options)
        #expect(parsed.all("listen") == ["a:1", "b:2"])
        #expect(parsed["listen"] == "b:2")
        #expect(try ParsedArguments.parse([], options: options).all("listen") == ["127.0.0.1:7878"])
        #expect(try ParsedArguments.parse([], options: options, environment: ["COINWATCH_LISTEN": "c:3"]).all("listen") == ["c:3"])
        #expect(try ParsedArguments.parse([], options: options).all("json").isEmpty)
    }

    @Test("flags, short aliases, positionals and --")
    func shapes() throws {
        let parsed = try ParsedArguments.parse(["get", "-h", "--json", "--", "--not-an-option", "-5"], options: options)
        #expect(parsed.has("help"))
        #expect(parsed.has("json"))
        #expect(parsed.positionals == ["get", "--not-an-option", "-5"])
        #expect(try ParsedArguments.parse(["-0.5"], options: options).positionals == ["-0.5"])
        #expect(try ParsedArguments.parse([], options: options, environment: ["COINWATCH_JSON": "1"]).has("json"))
    }

    @Test("mistakes are usage errors that name the option", arguments: [
        (["--bogus"], "unknown option '--bogus'"),
        (["-x"], "unknown option '-x'"),
        (["--listen"], "--listen needs a value"),
        (["--json=yes"], "--json takes no value"),
    ])
    func mistakes(arguments: [String], message: String) throws {
        let error = try #require(throws: UsageError.self) { try ParsedArguments.parse(arguments, options: options) }
        #expect(error.message == message)
    }

    @Test("typed values report what they expected")
    func typed() throws {
        let parsed = try ParsedArguments.parse(["--listen", "abc"], options: options)
        let error = try #require(throws: UsageError.self) { try parsed.value("listen", as: "a number") { Int($0) } }
        #expect(error.message == "--listen: 'abc' is not a number")
    }

    @Test("help lists options with environment and default")
    func help() {
        let text = HelpText.render(usage: "tool [options]", summary: "Does things.", options: options)
        #expect(text.contains("USAGE: tool [options]"))
        #expect(text.contains("--listen HOST:PORT"))
        #expect(text.contains("[env: COINWATCH_LISTEN] (default: 127.0.0.1:7878)"))
        #expect(text.contains("-h, --help"))
    }
}

@Suite("DurationText")
struct DurationTextTests {
    @Test("parses units and plain seconds", arguments: [
        ("500ms", Duration.milliseconds(500)), ("10s", .seconds(10)), ("2m", .seconds(120)), ("1h", .seconds(3600)),
        ("1.5", .milliseconds(1500)), ("0", .zero), ("250us", .microseconds(250)),
    ])
    func parses(text: String, expected: Duration) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test("refuses nonsense", arguments: ["", "s", "-1s", "ten", "1e3", "5d", "inf"])
    func refuses(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test("formats the shortest exact form")
    func formats() {
        #expect(DurationText.format(.seconds(10)) == "10s")
        #expect(DurationText.format(.milliseconds(250)) == "250ms")
        #expect(DurationText.format(.seconds(300)) == "5m")
    }
}
