import CoinWatchTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Each command against a real coinwatchd on a free port, as a script would run it.
@Suite("Commands against a server", .timeLimit(.minutes(2)))
struct CommandTests {
    @Test("settings: set, change one side, add a symbol, remove it, delete, and NOT_FOUND after")
    func settingsLifecycle() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let address = server.address

        var result = try await CLIProcess.run(["settings", "set", "phone-1", "btc", "--below", "60000", "--above", "70000.50"], server: address)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("version  1\n"))
        #expect(result.stdout.contains("BTC     60000  70000.5"))

        result = try await CLIProcess.run(["settings", "set", "phone-1", "BTC", "--above", "71000"], server: address)
        #expect(result.stdout.contains("BTC     60000  71000"), "--below keeps its value when only --above is given")

        result = try await CLIProcess.run(["settings", "set", "phone-1", "ETH", "--above", "4000.125"], server: address)
        result = try await CLIProcess.run(["settings", "get", "phone-1"], server: address)
        #expect(result.status == 0)
        #expect(result.stdout.contains("version  3\n"))
        #expect(result.stdout.contains("ETH         -   4000.125"))

        result = try await CLIProcess.run(["settings", "set", "phone-1", "BTC", "--above", "0"], server: address)
        #expect(result.stdout.contains("BTC     60000     -\n"))

        result = try await CLIProcess.run(["settings", "set", "phone-1", "ETH", "--off"], server: address)
        #expect(result.status == 0)
        #expect(!result.stdout.contains("ETH"))

        result = try await CLIProcess.run(["settings", "delete", "phone-1"], server: address)
        #expect(result.status == 0)
        #expect(result.stdout == "deleted the settings of device 'phone-1'\n")

        result = try await CLIProcess.run(["settings", "get", "phone-1"], server: address)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "error: NOT_FOUND: no settings for device 'phone-1'\n")

        result = try await CLIProcess.run(["settings", "delete", "phone-1"], server: address)
        #expect(result.status == 0)
        #expect(result.stdout == "device 'phone-1' had no settings\n")
    }

    @Test("a rule for a symbol the server has never priced is stored, with a warning on stderr")
    func unpricedSymbolWarning() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        try await publish(["BTC", "65000"], to: server)
        let typo = try await CLIProcess.run(["settings", "set", "phone-3", "BTCC", "--above", "70000"], server: server.address)
        #expect(typo.status == 0, "\(typo.stderr)")
        #expect(typo.stdout.contains("BTCC        -  70000"))
        #expect(typo.stderr == "warning: no price has been seen for BTCC on this server; its rule cannot fire until a feed "
            + "or PublishPrices prices it\n")
        let known = try await CLIProcess.run(["settings", "set", "phone-3", "BTC", "--above", "70000"], server: server.address)
        #expect(known.status == 0)
        #expect(known.stderr.isEmpty)
    }

    @Test("settings --json: stable field names, decimals as strings, off sides null")
    func settingsJSON() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        var result = try await CLIProcess.run(
            ["settings", "set", "phone-2", "BTC", "--below", "64250.50", "--json"], server: server.address)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(lines(result.stdout).count == 1)
        let object = try jsonObject(lines(result.stdout)[0])
        // The device's first save claimed it: its secret comes with this answer only.
        #expect(Set(object.keys) == ["device_id", "version", "updated_at_ms", "rules", "device_secret"])
        #expect((object["device_secret"] as? String)?.hasPrefix("cwd_") == true)
        // The help's JSON OUTPUT section, the fields' stable list, names every field a command prints.
        let help = try await CLIProcess.run(["--help"], server: server.address).stdout
        for key in object.keys { #expect(help.contains("\"\(key)\""), "--help does not list \(key)") }
        #expect(object["device_id"] as? String == "phone-2")
        #expect(object["version"] as? Int == 1)
        #expect((object["updated_at_ms"] as? Int ?? 0) > 1_600_000_000_000)
        let rules = try #require(object["rules"] as? [String: Any])
        let btc = try #require(rules["BTC"] as? [String: Any])
        #expect(btc["below"] as? String == "64250.5")
        #expect(btc["above"] is NSNull)
        #expect(result.stdout.contains(#""below":"64250.5""#), "the decimal is a JSON string, not a number")

        result = try await CLIProcess.run(["settings", "get", "phone-2"], server: server.address, environment: ["COINWATCH_JSON": "1"])
        #expect(try jsonObject(lines(result.stdout)[0])["version"] as? Int == 1)

        result = try await CLIProcess.run(
            ["settings", "set", "phone-2", "ETH", "--above", "5000", "--json"], server: server.address)
        #expect(Set(try jsonObject(lines(result.stdout)[0]).keys) == ["device_id", "version", "updated_at_ms", "rules"])

        result = try await CLIProcess.run(["--json", "settings", "delete", "phone-2"], server: server.address)
        let deleted = try jsonObject(lines(result.stdout)[0])
        #expect(deleted["device_id"] as? String == "phone-2")
        #expect(deleted["existed"] as? Bool == true)
    }

    @Test("--expect-version guards a change; a mismatch is ABORTED (exit 1)")
    func expectedVersion() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        var result = try await CLIProcess.run(
            ["settings", "set", "phone-3", "BTC", "--below", "1", "--expect-version", "0"], server: server.address)
        #expect(result.status == 0, "\(result.stderr)")
        result = try await CLIProcess.run(
            ["settings", "set", "phone-3", "BTC", "--below", "2", "--expect-version", "0"], server: server.address)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("error: ABORTED: "))
        result = try await CLIProcess.run(["settings", "delete", "phone-3", "--expect-version", "7"], server: server.address)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("error: ABORTED: "))
    }

    @Test("health: text and JSON")
    func health() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        var result = try await CLIProcess.run(["health"], server: server.address)
        #expect(result.status == 0)
        let text = lines(result.stdout)
        #expect(text.first?.hasPrefix("SERVING — coinwatchd ") == true)
        #expect(text.first?.hasSuffix(" at \(server.address)") == true)
        #expect(text.dropFirst().first == "push    off (coinwatchd runs without an APNs key); 0 registered devices")
        result = try await CLIProcess.run(["health", "--json"], server: server.address)
        let object = try jsonObject(lines(result.stdout)[0])
        #expect(object["status"] as? String == "SERVING")
        #expect(object["server"] as? String == server.address)
        #expect(object["server_name"] as? String == "coinwatchd")
        #expect(Set(object.keys) == ["status", "server", "server_name", "server_version", "feeds", "push"])
        #expect(object["feeds"] is [Any])
        let push = try #require(object["push"] as? [String: Any])
        #expect(push["enabled"] as? Bool == false)
        #expect(Set(push.keys) == [
            "enabled", "endpoint", "paused", "pause_reason", "queued", "in_flight", "delivered", "retried", "expired",
            "rejected", "registered_devices", "disabled_devices",
        ])
    }

    @Test("devices register, show and unregister: text and JSON")
    func devices() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let token = String(repeating: "AB", count: 32)
        var result = try await CLIProcess.run(
            ["devices", "register", "phone-1", token, "--sandbox", "--topic", "com.example.dev", "--locale", "en-GB"],
            server: server.address)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("token        \(token.lowercased())\n"))
        #expect(result.stdout.contains("environment  sandbox\n"))
        #expect(result.stdout.contains("topic        com.example.dev\n"))
        #expect(result.stdout.contains("delivery     active\n"))
        // The registration claimed the device: its secret is shown this once.
        #expect(result.stdout.contains("\ndevice secret  cwd_"))
        #expect(result.stdout.contains("issued by this registration and shown only now"))
        result = try await CLIProcess.run(
            ["devices", "register", "phone-1", token, "--sandbox", "--topic", "com.example.dev", "--locale", "en-GB",
             "--json"], server: server.address)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try jsonObject(lines(result.stdout)[0])["device_secret"] == nil, "a secret is issued once")
        result = try await CLIProcess.run(["devices", "show", "phone-1", "--json"], server: server.address)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try jsonObject(lines(result.stdout)[0])
        #expect(object["device_id"] as? String == "phone-1")
        #expect(object["apns_token"] as? String == token.lowercased())
        #expect(object["environment"] as? String == "sandbox")
        #expect(object["locale"] as? String == "en-GB")
        #expect(object["status"] as? String == "active")
        #expect(object["delivered"] as? Int == 0)
        result = try await CLIProcess.run(["devices", "unregister", "phone-1"], server: server.address)
        #expect(result.stdout == "unregistered device 'phone-1'\n")
        result = try await CLIProcess.run(["devices", "unregister", "phone-1", "--json"], server: server.address)
        #expect(result.stdout == "{\"device_id\":\"phone-1\",\"existed\":false}\n")
        result = try await CLIProcess.run(["devices", "show", "phone-1"], server: server.address)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("error: NOT_FOUND: device 'phone-1' is not registered for push"))
        // A bad token is refused before the server is asked.
        result = try await CLIProcess.run(["devices", "register", "phone-1", "abc"], server: server.address)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("error: TOKEN: must be an even number of 64–200 hex digits (got 3 characters)"))
    }

    @Test("--server from the option beats COINWATCH_SERVER")
    func serverOption() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let result = try await CLIProcess.run(
            ["--server", server.address, "health"], server: "127.0.0.1:\(try freeLoopbackPort())")
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test("an unreachable server is one line naming the address, exit 3", arguments: [
        ["health"], ["settings", "get", "x"], ["prices"], ["watch"], ["alerts", "x"], ["publish", "BTC", "1"],
    ])
    func unreachable(arguments: [String]) async throws {
        // Held bound and not listening, so that no test beside this one can take the port before the CLI tries it.
        let closed = try RefusingLoopbackPort()
        let address = "127.0.0.1:\(closed.port)"
        let result = try await CLIProcess.run(arguments, server: address)
        withExtendedLifetime(closed) {}
        #expect(result.status == 3)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "error: cannot reach coinwatchd at \(address): connection refused — is it running? (--server / COINWATCH_SERVER)\n")
    }

    @Test("bad usage prints the message and the command's usage, exit 64", arguments: [
        (["frobnicate"], "error: unknown command 'frobnicate'\nUSAGE: coinwatch [options] COMMAND"),
        (["pirces"], "error: unknown command 'pirces' (did you mean 'prices'?)\nUSAGE: coinwatch [options] COMMAND"),
        (["settings", "get"], """
            error: missing DEVICE
            USAGE: coinwatch settings get DEVICE [global options]
            Run 'coinwatch help settings get' for its options.

            """),
        (["settings", "frob"], "error: unknown settings command 'frob'\nUSAGE: coinwatch settings get DEVICE"),
        (["settings", "set", "d", "BTC", "--below", "1.2.3"], "error: --below: '1.2.3' is not a decimal number: more than one decimal point\nUSAGE: coinwatch settings set"),
        (["publish", "BTC"], "error: missing PRICE after 'BTC'\nUSAGE: coinwatch publish"),
        (["watch", "--interval", "soon"], "error: --interval: 'soon' is not a duration such as 500ms or 2s\nUSAGE: coinwatch watch"),
        (["watch", "--interval", "2m"], "error: --interval: at most 1m\nUSAGE: coinwatch watch"),
        (["health", "--ca-file", "/nonexistent/ca.pem"], "error: --ca-file: "),
        (["health", "--client-cert", "/nonexistent/c.pem", "--client-key", "/nonexistent/k.pem"],
         "error: --client-cert / --client-key: "),
        (["prices", "--nope"], "error: unknown option '--nope'\nUSAGE: coinwatch prices"),
        (["--server", "nocolon", "health"], "error: --server: 'nocolon' is not HOST:PORT\nUSAGE: coinwatch health"),
        (["--server", "[::1", "health"], "error: --server: '[::1' opens an IPv6 address with [ and does not close it"),
        (["--server", "h:0", "health"], "error: --server: 'h:0': the port must be 1–65535 (got '0')"),
        ([], "error: missing command (the shell starts only on a terminal)\nUSAGE: coinwatch [options] COMMAND"),
    ])
    func usage(arguments: [String], expected: String) async throws {
        let result = try await CLIProcess.run(arguments, server: "127.0.0.1:\(try freeLoopbackPort())")
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix(expected), "\(result.stderr)")
    }

    @Test("Ctrl-C (SIGINT) during a call that gets no answer exits 130 at once")
    func interruptedCall() async throws {
        let listener = try SilentListener()
        let process = try CLIProcess(["health", "--timeout", "5m"], server: "127.0.0.1:\(listener.port)")
        // Interrupt only once it is waiting for the answer (its Hello arrived), not while it is still starting.
        try listener.waitForClientBytes()
        process.signal(SIGINT)
        let result = try await process.finish(timeout: .seconds(20))
        #expect(result.status == 130)
        #expect(result.stderr.isEmpty)
    }

    @Test("pointed at an HTTP server it says so, once, instead of reading a frame length out of the reply")
    func httpServer() async throws {
        let server = try CannedReplyServer(reply: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        let address = "127.0.0.1:\(server.port)"
        let result = try await CLIProcess.run(["health"], server: address)
        #expect(result.status == 3)
        #expect(result.stderr == "error: cannot reach coinwatchd: \(address) is an HTTP server, not coinwatchd: it answered the "
            + "CoinWatch handshake with \"HTTP…\" — check the address (--server / COINWATCH_SERVER)\n")
    }

    @Test("a call that gets no answer fails at --timeout (exit 3: nothing answered)")
    func timeout() async throws {
        let listener = try SilentListener()
        let result = try await CLIProcess.run(["health", "--timeout", "300ms"], server: "127.0.0.1:\(listener.port)")
        #expect(result.status == 3)
        #expect(result.stderr.hasPrefix("error: cannot reach coinwatchd: no Welcome from 127.0.0.1:\(listener.port) in time — "),
                "\(result.stderr)")
    }

    @Test("alerts through a pipe: one line per alert as it fires, Ctrl-C exits 130")
    func alerts() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        try await publish(["BTC", "65000"], to: server)
        _ = try await CLIProcess.run(["settings", "set", "phone-5", "BTC", "--below", "64000", "--above", "66000"], server: server.address)
        let alerts = try CLIProcess(["alerts", "phone-5"], server: server.address)
        // It says on stderr what it waits for: the device's rules beside the current price.
        try await alerts.waitForError { $0.contains("waiting for alerts of device phone-5 (Ctrl-C stops); its rules:") }
        #expect(alerts.stderr.contains("  BTC     64000  66000  65000"), "\(alerts.stderr)")
        try await publish(["BTC", "63999.5"], to: server)
        try await alerts.waitForOutput { $0.contains("  BTC  ▼ below 64000  price 63999.5  id=") }
        try await publish(["BTC", "66000"], to: server)
        try await alerts.waitForOutput { $0.contains("  BTC  ▲ above 66000  price 66000  id=") }
        alerts.signal(SIGINT)
        let result = try await alerts.finish()
        #expect(result.status == 130, "\(result.stderr)")
        #expect(lines(result.stdout).count == 2)
        #expect(lines(result.stdout).allSatisfy { $0.hasPrefix("20") }, "each line starts with its time")
    }

    @Test("alerts --json: one object per alert with stable names, decimals as strings")
    func alertsJSON() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        try await publish(["ETH", "3000"], to: server)
        _ = try await CLIProcess.run(["settings", "set", "phone-6", "ETH", "--above", "3100.25"], server: server.address)
        let alerts = try CLIProcess(["alerts", "phone-6", "--json"], server: server.address)
        try await publish(["ETH", "3200.5"], to: server)
        try await alerts.waitForOutput { !lines($0).isEmpty }
        alerts.signal(SIGTERM)
        let result = try await alerts.finish()
        #expect(result.status == 143)
        let object = try jsonObject(lines(result.stdout)[0])
        #expect(Set(object.keys) == [
            "id", "device_id", "symbol", "direction", "threshold", "price", "time_ms", "idempotency_key",
            "push_interest", "apns_collapse_id", "apns_payload_json",
        ])
        #expect(object["device_id"] as? String == "phone-6")
        #expect(object["symbol"] as? String == "ETH")
        #expect(object["direction"] as? String == "above")
        #expect(object["threshold"] as? String == "3100.25")
        #expect(object["price"] as? String == "3200.5")
        #expect((object["time_ms"] as? Int ?? 0) > 1_600_000_000_000)
    }

    @Test("the shell without a terminal runs its input line by line")
    func shellScript() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        let result = try await CLIProcess.run(
            ["shell"], server: server.address,
            input: "settings set 'phone 4'x BTC --below 1\nsettings set phone-4 BTC --below 5 --json\nhealth\nsettings get nobody\n")
        #expect(result.stdout.contains(#""below":"5""#))
        #expect(result.stdout.contains("SERVING"))
        #expect(result.stderr.contains("error: DEVICE: "))
        #expect(result.stderr.contains("error: NOT_FOUND: no settings for device 'nobody'"))
        #expect(result.status == 1, "the status of the last line")

        let unclosed = try await CLIProcess.run(["shell"], server: server.address, input: "health\nprices \"BTC\n")
        #expect(unclosed.stderr.contains("error: unterminated \" quote"), "\(unclosed.stderr)")
        #expect(unclosed.status == 64, "a line that cannot be read is a usage error")
    }
}

/// Prices, publishing and price streams.
@Suite("Price commands against a server", .timeLimit(.minutes(2)))
struct PriceCommandTests {
    @Test("publish then prices: a table, JSON, and a note for unknown symbols")
    func publishAndPrices() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        var result = try await CLIProcess.run(["publish", "BTC", "64250.5", "eth", "3120.25", "DOGE", "0.1234"], server: server.address)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "accepted 3 ticks\n")
        result = try await CLIProcess.run(["publish", "BTC", "64250.50", "--json"], server: server.address)
        #expect(try jsonObject(lines(result.stdout)[0])["accepted"] as? Int == 1)

        result = try await CLIProcess.run(["prices"], server: server.address)
        #expect(result.status == 0)
        let table = lines(result.stdout)
        #expect(table.count == 4)
        #expect(table[0] == "SYMBOL       PRICE  TIME")
        #expect(table[1].hasPrefix("BTC     64250.5     20"))
        #expect(table[2].hasPrefix("DOGE        0.1234  20"))
        #expect(table[3].hasPrefix("ETH      3120.25    20"))

        result = try await CLIProcess.run(["prices", "btc", "XRP", "--json"], server: server.address)
        let object = try jsonObject(lines(result.stdout)[0])
        let prices = try #require(object["prices"] as? [[String: Any]])
        #expect(prices.count == 1)
        #expect(prices.first?["symbol"] as? String == "BTC")
        #expect(prices.first?["price"] as? String == "64250.5")
        #expect((prices.first?["time_ms"] as? Int ?? 0) > 1_600_000_000_000)

        result = try await CLIProcess.run(["prices", "XRP"], server: server.address)
        #expect(result.stdout == "no prices\n")
        #expect(result.stderr == "note: no price yet for XRP\n")
    }

    @Test("publish with a publish token: refused without --token, accepted with it")
    func token() async throws {
        let server = try await ServerProcess.start(arguments: ["--publish-token", "s3cret"])
        defer { server.stopInBackground() }
        var result = try await CLIProcess.run(["publish", "BTC", "1"], server: server.address)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("error: UNAUTHENTICATED: "))
        result = try await CLIProcess.run(["publish", "BTC", "1", "--token", "s3cret"], server: server.address)
        #expect(result.status == 0, "\(result.stderr)")
        result = try await CLIProcess.run(["publish", "BTC", "2"], server: server.address, environment: ["COINWATCH_TOKEN": "s3cret"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test("watch through a pipe: one line per update, Ctrl-C exits 130")
    func watchLines() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        try await publish(["BTC", "64250.5"], to: server)
        let watch = try CLIProcess(["watch", "BTC"], server: server.address)
        try await watch.waitForOutput { $0.contains("BTC 64250.5 seq=1 time=20") }
        try await publish(["BTC", "64300", "ETH", "5"], to: server)
        try await watch.waitForOutput { $0.contains("BTC 64300 seq=2 ") }
        watch.signal(SIGINT)
        let result = try await watch.finish()
        #expect(result.status == 130)
        #expect(!result.stdout.contains("ETH"), "only the symbols asked for")
        #expect(lines(result.stdout).allSatisfy { $0.hasPrefix("BTC ") })
    }

    @Test("watch --json: one object per line with stable names")
    func watchJSON() async throws {
        let server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        try await publish(["BTC", "1.5", "ETH", "2.25"], to: server)
        let watch = try CLIProcess(["watch", "--json", "--interval", "100ms"], server: server.address)
        try await watch.waitForOutput { lines($0).count >= 2 }
        watch.signal(SIGTERM)
        let result = try await watch.finish()
        #expect(result.status == 143)
        let objects = try lines(result.stdout).map { try jsonObject($0) }
        #expect(objects.allSatisfy { Set($0.keys) == ["symbol", "price", "source_time_ms", "sequence"] })
        #expect(objects.map { $0["sequence"] as? Int } == Array(1...objects.count))
        #expect(objects.contains { $0["symbol"] as? String == "ETH" && $0["price"] as? String == "2.25" })
    }

    @Test("watch through a pipe reconnects by itself when the server restarts")
    func watchReconnects() async throws {
        var server = try await ServerProcess.start()
        defer { server.stopInBackground() }
        try await publish(["BTC", "1"], to: server)
        let watch = try CLIProcess(["watch", "BTC"], server: server.address)
        try await watch.waitForOutput { $0.contains("BTC 1 seq=1") }
        server = try await server.restart()
        try await publish(["BTC", "2"], to: server)
        try await watch.waitForOutput { $0.contains("BTC 2 seq=") }
        watch.signal(SIGINT)
        let result = try await watch.finish()
        #expect(result.status == 130)
        #expect(result.stderr.contains("connection lost ("))
        #expect(result.stderr.contains("reconnected to \(server.address)"))
    }
}
