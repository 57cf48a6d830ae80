import CoinWatchClient
import CoinWatchCore
import CoinWatchProto

#if canImport(Glibc)
import Glibc
#endif

/// The full-screen live dashboard of `watch` on a terminal.
///
/// Runs on the UI thread: the stream is followed on a task (`StreamFollower`), and this loop waits on
/// the console for news, keys, signals or the next tick of the clock (ages and reconnect countdowns
/// change even when no price does), then redraws the screen in place. The terminal is put back
/// exactly as it was however the loop ends: the alternate screen is left, the cursor shown, and the
/// saved terminal settings restored.
enum Dashboard {
    /// How the dashboard was left.
    enum Exit {
        /// `q`.
        case quit
        /// Ctrl-C, or a signal such as SIGTERM.
        case stopped(Int32)
    }

    /// Frames are drawn at most this often, however fast prices come.
    static let frameInterval = Duration.milliseconds(50)
    /// The screen is redrawn at least this often (ages, countdowns).
    static let clockInterval = Duration.milliseconds(200)

    static func run(
        _ context: CommandContext, following events: FollowStream<V1.PriceUpdate>
    ) throws(CLIError) -> Exit {
        let terminal = context.terminal
        let follower = StreamFollower<V1.PriceUpdate>()
        defer { follower.stop() }
        let result = try terminal.withRawMode { () throws(CLIError) -> Result<Exit, CLIError> in
            terminal.write(ANSI.enterAlternateScreen + ANSI.hideCursor + ANSI.clearScreen)
            defer { terminal.write(ANSI.reset + ANSI.showCursor + ANSI.leaveAlternateScreen) }
            follower.start(events, session: context.session, console: context.console)
            return loop(context, follower: follower)
        }
        return try result.get()
    }

    private static func loop(_ context: CommandContext, follower: StreamFollower<V1.PriceUpdate>) -> Result<Exit, CLIError> {
        let terminal = context.terminal
        let color = context.color
        var model = DashboardModel(server: context.session.address, started: .now)
        var stream = 0
        var size = terminal.size
        var decoder = KeyDecoder()
        var lastFrame: [String] = []
        var lastDrawn = ContinuousClock.Instant.now - clockInterval
        while true {
            let (items, state, failure) = follower.drain()
            let now = ContinuousClock.Instant.now
            let wallClockMs = WallClock.milliseconds()
            for item in items {
                while stream < item.stream {
                    stream += 1
                    model.streamOpened()
                }
                model.apply(item.element, at: now, wallClockMs: wallClockMs)
            }
            model.connection = state
            if let failure { return .failure(failure) }
            var timeout = clockInterval
            if now - lastDrawn >= frameInterval {
                let frame = DashboardView.render(model, now: now, rows: size.rows, columns: size.columns, color: color)
                if frame != lastFrame {
                    terminal.write(Screen.frame(frame))
                    lastFrame = frame
                }
                lastDrawn = now
            } else {
                // News came too soon after the last frame: draw it when the frame interval is up.
                timeout = frameInterval - (now - lastDrawn)
            }
            if decoder.hasPending { timeout = min(timeout, .milliseconds(50)) }
            let events = context.console.wait(timeout: timeout, input: terminal.input)
            for signal in events.signals {
                if signal == SIGWINCH {
                    size = terminal.size
                    terminal.write(ANSI.clearScreen)
                    lastFrame = []
                    lastDrawn = .now - clockInterval
                } else {
                    return .success(.stopped(signal))
                }
            }
            if events.inputClosed { return .success(.quit) }
            var keys = decoder.feed(events.input)
            if events.input.isEmpty && decoder.hasPending { keys += decoder.flush() }
            for key in keys {
                switch key {
                case .character("q"), .character("Q"), .control("d"):
                    return .success(.quit)
                case .control("c"):
                    return .success(.stopped(SIGINT))
                case .control("l"):
                    terminal.write(ANSI.clearScreen)
                    lastFrame = []
                default:
                    break
                }
            }
        }
    }
}
