import Foundation

// Waiting for a condition in tests: bounded polling instead of sleeps, so a busy machine only makes a test slower,
// never wrong. The deadlines are generous on purpose; a passing test returns as soon as its condition holds. The
// default is a minute: at the start of a full run every suite starts at once on two cores, and a clean-clone run
// once saw two StreamAlerts calls take longer than 20 s to open.

/// Polls `condition` every `interval` (2 ms unless a condition is costly, such as a call that retries a write)
/// until it holds or `timeout` passes; returns the last answer. Never asserts on time itself.
public func eventually(
    timeout: Duration = .seconds(60), interval: Duration = .milliseconds(2), _ condition: () async -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return await condition()
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
