import CoinWatchAuth
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Testing
@testable import CoinWatchService

/// RegisterDevice as a claiming call: the registration of a device without a secret issues it one, as its first
/// save would, and a registration that fails issues nothing.
@Suite struct RegistrationClaimTests {
    static func request(_ device: String, _ environment: V1.PushEnvironment) -> V1.RegisterDeviceRequest {
        V1.RegisterDeviceRequest(deviceID: device, apnsToken: pushToken(), environment: environment)
    }

    @Test("a device's first registration returns its secret once; a failed one takes its claim back")
    func registrationClaims() async throws {
        let fake = FakeAPNs()
        // The credentials in a store of their own, so what a failed registration left in it can be read back.
        let directory = try TemporaryDirectory(prefix: "registration-claims")
        let database = try Database(path: directory.path + "/db")
        defer { database.close() }
        let credentials = try CredentialStore(database: database)
        let device = try DeviceID(validating: "phone-1")
        try await withAlertService(configure: { configuration in
            delivering(to: fake)(&configuration)
            configuration.deviceClaims = DeviceClaims(credentials: credentials, mode: .required)
        }) { harness in
            let connection = try await harness.connect()
            defer { connection.close() }
            // This server sends to production: the sandbox registration fails after its claim was stored.
            let refused = await #expect(throws: RPCError.self) {
                try await connection.unary(V1.CoinWatch.registerDevice, Self.request("phone-1", .sandbox))
            }
            #expect(refused?.code == .failedPrecondition)
            #expect(!credentials.isClaimed(device), "a failed registration left its device claimed")
            #expect(try !CredentialStore(database: database).isClaimed(device), "its secret's record was left stored")

            let first = try await connection.unary(V1.CoinWatch.registerDevice, Self.request("phone-1", .production))
            #expect(first.registration?.deviceID == "phone-1")
            #expect(first.deviceSecret.hasPrefix("cwd_"))
            let principal = credentials.authenticate(try Credential(token: Array(first.deviceSecret.utf8)))
            #expect(principal == .success(.device(device)))
            // The connection carries no credential: the device is claimed now, so it is refused.
            let again = await #expect(throws: RPCError.self) {
                try await connection.unary(V1.CoinWatch.registerDevice, Self.request("phone-1", .production))
            }
            #expect(again?.code == .unauthenticated)
        }
    }
}
