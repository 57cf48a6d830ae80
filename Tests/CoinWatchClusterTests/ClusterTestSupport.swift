@testable import CoinWatchCluster
import CoinWatchTestSupport
import Foundation

/// Waits for `condition` with bounded polling (never a fixed sleep as synchronisation); false when it did not
/// hold within `timeout`, which is generous because the machine may be busy.
func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// A connection to `urls` for a test, with its events counted.
func testConnection(_ urls: String) throws -> NATSConnection {
    try NATSConnection(options: .init(servers: urls.split(separator: ",").map(String.init)), onEvent: { _ in })
}
