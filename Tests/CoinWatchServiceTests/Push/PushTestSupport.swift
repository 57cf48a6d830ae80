import CoinWatchModel
import CoinWatchProto
import CoinWatchPush
import CoinWatchRPC
import CoinWatchTestSupport
@testable import CoinWatchService

/// A device token for tests: `prefix` followed by `a`s up to 64 hex digits.
func pushToken(_ prefix: String = "") -> String {
    prefix + String(repeating: "a", count: 64 - prefix.count)
}

extension AlertServiceHarness {
    /// RegisterDevice through the server, as a client calls it.
    @discardableResult
    func register(_ device: String, token: String, environment: V1.PushEnvironment = .production, topic: String = "")
        async throws -> V1.DeviceRegistration
    {
        let connection = try await connect()
        defer { connection.close() }
        let request = V1.RegisterDeviceRequest(deviceID: device, apnsToken: token, environment: environment, topic: topic)
        return try await connection.unary(V1.CoinWatch.registerDevice, request).registration ?? V1.DeviceRegistration()
    }

    /// GetDevice through the server.
    func device(_ device: String) async throws -> V1.DeviceRegistration {
        let connection = try await connect()
        defer { connection.close() }
        return try await connection.unary(V1.CoinWatch.getDevice, V1.GetDeviceRequest(deviceID: device)).registration
            ?? V1.DeviceRegistration()
    }

    var pushStats: PushStats { service.push.stats }

    /// Waits (bounded) until `fake` has received `count` requests in total.
    func waitForSends(_ fake: FakeAPNs, _ count: Int) async -> Bool {
        await eventually { fake.received.count >= count }
    }
}

/// Configures a service that delivers to `fake` (production environment, topic `com.example.coinwatch`).
func delivering(to fake: FakeAPNs, initialBackoff: Duration = .milliseconds(20), maxBackoff: Duration = .milliseconds(200))
    -> (inout CoinWatchService.Configuration) -> Void
{
    { configuration in
        configuration.push.sender = fake
        configuration.push.defaultTopic = "com.example.coinwatch"
        configuration.push.initialBackoff = initialBackoff
        configuration.push.maxBackoff = maxBackoff
    }
}
