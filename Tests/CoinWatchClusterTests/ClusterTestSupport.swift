@testable import CoinWatchCluster
import CoinWatchTestSupport
import Foundation

/// A connection to `urls` for a test, with its events counted.
func testConnection(_ urls: String) throws -> NATSConnection {
    try NATSConnection(options: .init(servers: urls.split(separator: ",").map(String.init)), onEvent: { _ in })
}
