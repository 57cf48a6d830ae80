@testable import CoinWatchCLI
import CoinWatchProto
import CoinWatchRPC
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Errors and exit statuses")
struct ErrorTests {
    @Test("each kind of failure has its documented exit status")
    func statuses() {
        #expect(CLIError(RPCError(code: .notFound, message: "x")).code.exitStatus == 1)
        #expect(CLIError.unreachable(address: "h:1", RPCError(code: .unavailable, message: "x")).code.exitStatus == 3)
        #expect(CLIError.usage("bad", "coinwatch x").code.exitStatus == 64)
        #expect(CLIError.interrupted.code.exitStatus == 130)
        #expect(CLIError.stopped(by: SIGTERM).code.exitStatus == 143)
    }

    @Test("codes name their kind; a signal's code carries the signal")
    func codes() {
        #expect(CLIError.Code.rpc.name == "rpc")
        #expect(CLIError.Code.usage.description == "usage")
        #expect(CLIError.Code.interrupted == .signal(SIGINT))
        #expect(CLIError.Code.signal(SIGTERM).name == "signal \(SIGTERM)")
        #expect(CLIError.Code.signal(SIGHUP).signal == SIGHUP)
        #expect(CLIError.Code.unreachable.signal == nil)
    }

    @Test("RPC errors read CODE: message")
    func rpcMessage() {
        let error = CLIError(RPCError(code: .notFound, message: "no settings for device 'x'"))
        #expect(error.message == "NOT_FOUND: no settings for device 'x'")
    }

    @Test("unreachable: one line naming the address once, the reason and what to check", arguments: [
        ("127.0.0.1:7878", "cannot connect to 127.0.0.1:7878: connect failed: Connection refused (errno 111)",
         "cannot reach coinwatchd at 127.0.0.1:7878: connection refused — is it running? (--server / COINWATCH_SERVER)"),
        ("nohost:7878", "cannot connect to nohost:7878: getaddrinfo failed: Name or service not known",
         "cannot reach coinwatchd at nohost:7878: name or service not known — check the host name (--server / COINWATCH_SERVER)"),
        ("127.0.0.1:8080", "127.0.0.1:8080 is an HTTP server, not coinwatchd: it answered the CoinWatch handshake with \"HTTP…\"",
         "cannot reach coinwatchd: 127.0.0.1:8080 is an HTTP server, not coinwatchd: it answered the CoinWatch handshake "
            + "with \"HTTP…\" — check the address (--server / COINWATCH_SERVER)"),
        ("127.0.0.1:22", "no Welcome from 127.0.0.1:22 in time",
         "cannot reach coinwatchd: no Welcome from 127.0.0.1:22 in time — check the address (--server / COINWATCH_SERVER)"),
        ("h:1", "the server at h:1 closed the connection",
         "cannot reach coinwatchd: the server at h:1 closed the connection — is it running? (--server / COINWATCH_SERVER)"),
    ])
    func unreachable(address: String, message: String, expected: String) {
        let error = CLIError.unreachable(address: address, RPCError(code: .unavailable, message: message))
        #expect(error.message == expected)
    }

    /// What `Dispatcher.report` writes for `error`.
    func reported(_ error: CLIError, inShell: Bool) throws -> String {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        Dispatcher.report(error, inShell: inShell, to: OutputStream(descriptor: fds[1]))
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        close(fds[0])
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("usage errors point at the mistyped command's help: 'coinwatch help X' outside the shell, 'help X' in it")
    func usageHints() throws {
        let missing = CLIError.usage("missing DEVICE", of: CommandCatalog.settingsGet)
        #expect(try reported(missing, inShell: false) == """
            error: missing DEVICE
            USAGE: coinwatch settings get DEVICE [global options]
            Run 'coinwatch help settings get' for its options.

            """)
        #expect(try reported(missing, inShell: true) == """
            error: missing DEVICE
            USAGE: settings get DEVICE [global options]
            Type 'help settings get' for its options.

            """)
        let group = CLIError.usage("missing settings command: get, set or delete", CommandCatalog.groupUsage("settings"),
                                   helpTopic: "settings")
        #expect(try reported(group, inShell: false).hasSuffix("Run 'coinwatch help settings' for its options.\n"))
        let unknown = CLIError.usage("unknown command 'x'", CommandCatalog.overviewUsage)
        #expect(try reported(unknown, inShell: false).hasSuffix("Run 'coinwatch help' for the commands.\n"))
        #expect(try reported(unknown, inShell: true) == "error: unknown command 'x'\nType 'help' for the commands.\n")
        #expect(try reported(CLIError(RPCError(code: .notFound, message: "x")), inShell: true) == "error: NOT_FOUND: x\n")
    }

    @Test("alerts says on stderr what it waits for: the device's rules beside the prices, or that it has none")
    func alertsWaiting() {
        let settings = V1.Settings(deviceID: "phone-1", rules: [
            "BTC": V1.AlertRule(below: V1.Decimal(mantissa: 60000, scale: 0), above: V1.Decimal(mantissa: 700005, scale: 1)),
            "NOPE": V1.AlertRule(above: V1.Decimal(mantissa: 1, scale: 0)),
        ])
        let prices = [V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: 6_425_055, scale: 2))]
        #expect(Presenter.alertsWaitingText(device: "phone-1", rules: .success((settings, prices)), inShell: false) == """
            waiting for alerts of device phone-1 (Ctrl-C stops); its rules:
              SYMBOL  BELOW    ABOVE       NOW
              BTC     60000  70000.5  64250.55
              NOPE        -      1        -
              (no price yet for NOPE: its rule cannot fire until a feed or a publisher prices it)

            """)
        #expect(Presenter.alertsWaitingText(
            device: "phone-2", rules: .failure(RPCError(code: .notFound, message: "no settings")), inShell: true)
            == "waiting for alerts of device phone-2 (Ctrl-C returns to the prompt); it has no rules, so none will fire "
            + "until one is set ('settings set phone-2 SYMBOL --below PRICE')\n")
        #expect(Presenter.alertsWaitingText(
            device: "phone-3", rules: .failure(RPCError(code: .unavailable, message: "gone")), inShell: false)
            == "waiting for alerts of device phone-3 (Ctrl-C stops)\n")
    }

    @Test("a server without alerts gets a clear 'not available', other errors pass through")
    func alertsUnavailable() {
        let unimplemented = CLIError(RPCError(code: .unimplemented, message: "unknown method 'coinwatch.v1.CoinWatch/StreamAlerts'"))
        let mapped = StreamCommands.alertsError(unimplemented)
        #expect(mapped.message == "alerts are not available on this server (UNIMPLEMENTED: unknown method 'coinwatch.v1.CoinWatch/StreamAlerts')")
        #expect(mapped.code.exitStatus == 1)
        let other = CLIError(RPCError(code: .invalidArgument, message: "device_id: bad"))
        #expect(StreamCommands.alertsError(other) == other)
        #expect(StreamCommands.alertsError(.interrupted) == .interrupted)
    }
}
