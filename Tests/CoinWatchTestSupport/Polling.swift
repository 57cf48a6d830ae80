/// Waiting for a condition the way tests on a busy machine must: bounded polling, never a fixed sleep as
/// synchronisation.
public enum Polling {
    /// Polls `condition` every `interval` until it holds; false when it did not hold within `timeout` (generous by
    /// default: the machine may be busy).
    public static func until(
        timeout: Duration = .seconds(30), interval: Duration = .milliseconds(20),
        _ condition: () async throws -> Bool
    ) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: interval)
        }
        return try await condition()
    }
}
