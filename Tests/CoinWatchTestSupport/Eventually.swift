import Foundation

// Waiting for a condition in tests: bounded polling instead of sleeps, so a busy machine only makes a test slower,
// never wrong. The deadlines are generous on purpose; a passing test returns as soon as its condition holds. The
// default is a minute: at the start of a full run every suite starts at once on two cores, and a clean-clone run
// once saw two StreamAlerts calls take longer than 20 s to open.

/// Polls `condition` every `interval` (2 ms unless a condition is costly, such as a call that retries a write)
/// until it holds or `timeout` passes; returns the last answer. Never asserts on time itself.
///
/// The timeout counts the time this wait could run, not the time the machine was too busy to run it: a sleep that
/// overran its interval by more than `Patience.starvationSlack` waited for a thread of the task pool, and the
/// overrun is not counted. So a run that keeps both cores busy (every suite starting at once) stretches the wait
/// instead of failing it. However busy the machine, the wait ends after `Patience.hardBoundFactor` times `timeout`
/// of wall-clock time.
public func eventually(
    timeout: Duration = .seconds(60), interval: Duration = .milliseconds(2), _ condition: () async -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let start = clock.now
    return await Patience(timeout: timeout, interval: interval).wait(
        until: condition, elapsed: { clock.now - start }, sleep: { try? await Task.sleep(for: $0) })
}

/// The counting behind `eventually`, with its clock and its sleep passed in so that tests can starve it on purpose.
public struct Patience: Sendable {
    /// How much longer than asked a sleep may take and still count whole: beyond it, the overrun is taken for time
    /// spent waiting for a thread, not by the condition.
    public static let starvationSlack: Duration = .milliseconds(50)
    /// How many times its timeout a wait lasts at most in wall-clock time, however busy the machine.
    public static let hardBoundFactor = 5

    public var timeout: Duration
    public var interval: Duration

    public init(timeout: Duration, interval: Duration) {
        self.timeout = timeout
        self.interval = interval
    }

    /// Polls `condition` until it holds, or until the counted time reaches `timeout` (or the wall-clock time,
    /// `elapsed()`, reaches the hard bound); returns the last answer.
    public func wait(
        until condition: () async -> Bool, elapsed: () -> Duration, sleep: (Duration) async -> Void
    ) async -> Bool {
        let hardBound = timeout * Self.hardBoundFactor
        var counted: Duration = .zero
        while counted < timeout && elapsed() < hardBound {
            let polled = elapsed()
            if await condition() { return true }
            let slept = elapsed()
            await sleep(interval)
            counted += (slept - polled) + min(elapsed() - slept, interval + Self.starvationSlack)
        }
        return await condition()
    }
}

/// `eventually` for synchronous tests: polls every 2 ms, up to `timeout`.
public func eventuallySync(timeout: Duration = .seconds(60), _ condition: () -> Bool) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}
