import CoinWatchClient
import CoinWatchCommandLine
import CoinWatchCore
import CoinWatchProto
import CoinWatchRPC

#if canImport(Glibc)
import Glibc
#endif

/// `watch` and `alerts`: commands that follow a stream until stopped.
enum StreamCommands {
    static func watch(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let (symbols, interval) = try usage(CommandCatalog.watch) { () throws(UsageError) in
            let symbols = try parsed.positionals.map { text throws(UsageError) in try ArgumentReaders.symbol(text) }
            let interval = try parsed.value("interval", as: "a duration such as 500ms or 2s", DurationText.parse) ?? .zero
            // PROTOCOL.md: `min_interval_ms` is at most 60,000; a longer one would start the command and then fail
            // as an RPC error.
            guard interval <= .seconds(60) else { throw UsageError("--interval: at most 1m") }
            return (symbols, interval)
        }
        let onlyChanges = parsed.has("only-changes")
        // Reach the server before taking over the screen, so a wrong address is one plain line (exit 3).
        let session = context.session
        _ = try context.run { () throws(CLIError) in try await session.connect() }
        let updates = session.client.followPrices(
            symbols: symbols, minInterval: interval, onlyChanges: onlyChanges, options: .cli)
        if !context.options.json && context.terminal.isInteractive {
            switch try Dashboard.run(context, following: updates) {
            case .quit: return ExitStatus.ok
            case .stopped(let signal): throw CLIError.stopped(by: signal)
            }
        }
        return try follow(context, updates) { update in
            context.options.json ? Presenter.updateJSON(update).description : Presenter.updateLine(update)
        }
    }

    static func alerts(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let device = try usage(CommandCatalog.alerts) { () throws(UsageError) in
            try ArgumentReaders.device(ArgumentReaders.exactly(["DEVICE"], in: parsed)[0])
        }
        let session = context.session
        _ = try context.run { () throws(CLIError) in try await session.connect() }
        // A stream that shows nothing until a price crosses a threshold looks hung: say on stderr what it waits for.
        let rules = try context.run { () throws(CLIError) -> Result<(V1.Settings, [V1.Tick]), RPCError> in
            do throws(RPCError) {
                let settings = try await session.client.settings(device: device)
                let symbols = settings.rules.keys.sorted()
                return .success((settings, symbols.isEmpty ? [] : try await session.client.prices(symbols: symbols)))
            } catch {
                return .failure(error)
            }
        }
        context.err.write(Presenter.alertsWaitingText(device: device, rules: rules, inShell: context.inShell))
        do {
            let alerts = session.client.followAlerts(device: device, options: .cli)
            return try follow(context, alerts) { alert in
                context.options.json ? Presenter.alertJSON(alert).description : Presenter.alertLine(alert)
            }
        } catch {
            throw alertsError(error)
        }
    }

    /// A server without alerts answers UNIMPLEMENTED; that is said in words, not as a protocol error.
    static func alertsError(_ error: CLIError) -> CLIError {
        guard error.code == .rpc, error.message.hasPrefix("UNIMPLEMENTED:") else { return error }
        return CLIError(code: .rpc, message: "alerts are not available on this server (\(error.message))")
    }

    /// Prints a stream one line per item until it ends, fails, or is stopped; reconnects (saying so on
    /// stderr) when the connection is lost.
    static func follow<Element: Sendable>(
        _ context: CommandContext, _ events: FollowStream<Element>, line: (Element) -> String
    ) throws(CLIError) -> Int32 {
        let follower = StreamFollower<Element>()
        defer { follower.stop() }
        follower.start(events, session: context.session, console: context.console)
        var reported: FollowState?
        var reconnecting = false
        var decoder = KeyDecoder()
        while true {
            let (items, state, failure) = follower.drain()
            if !items.isEmpty {
                context.out.write(items.map { line($0.element) + "\n" }.joined())
            }
            switch state {
            case .waiting(let retryAt, let attempt, let reason):
                if state != reported {
                    let delay = Duration.milliseconds(max(0, (retryAt - .now).inMilliseconds))
                    let reason = CLIError.connectFailureReason(reason.message)
                    context.err.line(
                        "connection lost (\(reason)); reconnecting in \(DurationText.format(delay)) (attempt \(attempt))")
                    reported = state
                }
                reconnecting = true
            case .connected(let server, _):
                if reconnecting {
                    context.err.line("reconnected to \(server)")
                    reconnecting = false
                }
            case .ended:
                if let failure { throw failure }
                return ExitStatus.ok
            case .connecting:
                break
            }
            let events = context.console.wait(timeout: nil, input: context.interruptInput)
            if let signal = events.signals.first(where: { $0 != SIGWINCH }) { throw CLIError.stopped(by: signal) }
            if decoder.feed(events.input).contains(.control("c")) { throw CLIError.interrupted }
            if events.inputClosed { throw CLIError.interrupted }
        }
    }
}
