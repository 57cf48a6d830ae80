import CoinWatchAuth
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import CoinWatchTestSupport
import Foundation
import Testing
@testable import CoinWatchService

/// The settings methods issuing device secrets: a device's first save claims it.
@Suite("device secrets issued by SaveSettings", .serialized)
struct DeviceClaimTests {
    /// A whole service with device claims on, over a database in a temporary directory. The claims' records go
    /// into the settings batches of that database; the credential store itself is kept in memory.
    static func harness(_ directory: TemporaryDirectory) throws -> (AlertServiceHarness, CredentialStore) {
        let credentials = try CredentialStore(database: nil)
        let harness = try AlertServiceHarness(path: directory.path + "/db") {
            $0.deviceClaims = DeviceClaims(credentials: credentials, mode: .off)
        }
        return (harness, credentials)
    }

    static func save(_ device: String, expectedVersion: UInt64? = nil) -> V1.SaveSettingsRequest {
        V1.SaveSettingsRequest(
            deviceID: device, setRules: ["BTC": rule(below: "60000")], removeSymbols: [],
            precondition: expectedVersion.map { .expectedVersion($0) })
    }

    @Test("the first save returns the device's secret once, stored hashed in the same batch; later saves return none")
    func firstSaveClaims() async throws {
        let directory = try TemporaryDirectory(prefix: "claims")
        let (harness, credentials) = try Self.harness(directory)
        let connection = try await harness.connect()
        let first = try await connection.unary(V1.CoinWatch.saveSettings, Self.save("3F2504E0_4F89_11D3_9A0C_0305E82C3301"))
        let device = try DeviceID(validating: "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
        #expect(first.settings?.version == 1)
        #expect(first.deviceSecret.hasPrefix("cwd_"))
        let credential = try Credential(token: Array(first.deviceSecret.utf8))
        #expect(credentials.authenticate(credential) == .success(.device(device)))
        let second = try await connection.unary(V1.CoinWatch.saveSettings, Self.save(device.rawValue))
        #expect(second.settings?.version == 2)
        #expect(second.deviceSecret.isEmpty)
        // The record holds a hash, not the secret.
        let record = try #require(try harness.database.get(Array("auth:device:\(device.rawValue)".utf8)))
        #expect(!String(decoding: record, as: UTF8.self).contains(String(first.deviceSecret.dropFirst(4).prefix(43))))
        connection.close()
        await harness.shutdown()
    }

    @Test("a save that fails issues nothing and leaves the device free to claim")
    func failedSaveIssuesNothing() async throws {
        let directory = try TemporaryDirectory(prefix: "claims")
        let (harness, credentials) = try Self.harness(directory)
        let connection = try await harness.connect()
        let error = await #expect(throws: RPCError.self) {
            try await connection.unary(V1.CoinWatch.saveSettings, Self.save("phone-1", expectedVersion: 3))
        }
        #expect(error?.code == .aborted)
        let phone = try DeviceID(validating: "phone-1")
        #expect(!credentials.isClaimed(phone))
        #expect(try harness.database.get(Array("auth:device:phone-1".utf8)) == nil)
        let saved = try await connection.unary(V1.CoinWatch.saveSettings, Self.save("phone-1", expectedVersion: 0))
        #expect(!saved.deviceSecret.isEmpty)
        #expect(credentials.isClaimed(phone))
        connection.close()
        await harness.shutdown()
    }

    @Test("a save that is not valid is refused with its reason before any secret is issued")
    func invalidSaveIssuesNothing() async throws {
        let directory = try TemporaryDirectory(prefix: "claims")
        let (harness, credentials) = try Self.harness(directory)
        let connection = try await harness.connect()
        let invalid = V1.SaveSettingsRequest(
            deviceID: "phone-1", setRules: ["BTC": rule(below: "70000", above: "60000")], removeSymbols: [],
            precondition: nil)
        let error = await #expect(throws: RPCError.self) {
            try await connection.unary(V1.CoinWatch.saveSettings, invalid)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("below (70000) must be less than above (60000)") == true)
        #expect(!credentials.isClaimed(try DeviceID(validating: "phone-1")))
        #expect(try harness.database.get(Array("auth:device:phone-1".utf8)) == nil)
        connection.close()
        await harness.shutdown()
    }

    @Test("a device claimed by another call since authorisation refuses an anonymous caller when auth is required")
    func lostRace() throws {
        let credentials = try CredentialStore(database: nil)
        let claims = DeviceClaims(credentials: credentials, mode: .required)
        let phone = try DeviceID(validating: "phone-1")
        let context = ServerContext(method: V1.CoinWatch.saveSettings.path)
        let claim = try #require(try claims.claim(phone, issuedBy: "SaveSettings", context: context))
        // Another anonymous save of the same device, authorised while it had no secret: it lost the race.
        #expect(throws: RPCError.self) { try claims.claim(phone, issuedBy: "SaveSettings", context: context) }
        credentials.finishClaim(claim, stored: true)
        #expect(throws: RPCError.self) { try claims.claim(phone, issuedBy: "SaveSettings", context: context) }
        // A credential of spaces only is none (the authoriser treats it as anonymous too).
        for blank in [ServerContext(method: "m", metadata: ["authorization": " "]), ServerContext(method: "m", authToken: " \t")] {
            #expect(throws: RPCError.self) { try claims.claim(phone, issuedBy: "SaveSettings", context: blank) }
        }
        // A caller with a credential (checked by the authoriser) goes on, without a new secret.
        let deviceContext = ServerContext(method: V1.CoinWatch.saveSettings.path, authToken: claim.token)
        #expect(try claims.claim(phone, issuedBy: "SaveSettings", context: deviceContext) == nil)
        // With authorisation off, no one is refused.
        #expect(try DeviceClaims(credentials: credentials, mode: .off).claim(phone, issuedBy: "SaveSettings", context: context) == nil)
    }

    @Test("a save whose call ended before the writer took it is not written, and neither is its claim")
    func abandonedSaveNotWritten() async throws {
        let directory = try TemporaryDirectory(prefix: "claims")
        let (harness, credentials) = try Self.harness(directory)
        let store = harness.service.settings
        let phone = try DeviceID(validating: "phone-9")
        let claims = DeviceClaims(credentials: credentials, mode: .required)
        let context = ServerContext(method: V1.CoinWatch.saveSettings.path)
        let claim = try #require(try claims.claim(phone, issuedBy: "SaveSettings", context: context))
        var command = try SaveCommand(validating: Self.save("phone-9"))
        command.attachedWrite = (claim.recordKey, claim.recordValue)
        command.call = context
        context.cancel()
        let result = await withCheckedContinuation { continuation in
            store.submitSave(command) { continuation.resume(returning: $0.map(\.settings)) }
        }
        #expect(throws: RPCError(code: .cancelled, message: "the call ended before its save was written")) {
            try result.get()
        }
        #expect(store.settings(for: phone) == nil)
        #expect(try harness.database.get(claim.recordKey) == nil, "the claim's record rode on the save")
        // The handler gives the claim back on that failure, as on any other.
        credentials.finishClaim(claim, stored: false)
        #expect(!credentials.isClaimed(phone))
        await harness.shutdown()
    }

    @Test("a claim whose answer could not be sent is taken back, and the device can be claimed again")
    func takeBack() async throws {
        let credentials = try CredentialStore(database: nil)
        let claims = DeviceClaims(credentials: credentials, mode: .required)
        let phone = try DeviceID(validating: "phone-1")
        let context = ServerContext(method: V1.CoinWatch.saveSettings.path)
        let claim = try #require(try claims.claim(phone, issuedBy: "SaveSettings", context: context))
        credentials.finishClaim(claim, stored: true)
        #expect(credentials.isClaimed(phone))
        claims.takeBack(claim)
        #expect(await eventually { !credentials.isClaimed(phone) })
        #expect(try claims.claim(phone, issuedBy: "SaveSettings", context: context) != nil)
    }

    @Test("a caller with a service key claims nothing: the device keeps its first use for itself")
    func keysDoNotClaim() throws {
        let credentials = try CredentialStore(database: nil)
        let phone = try DeviceID(validating: "phone-1")
        let token = try credentials.createKey(name: "ops", scopes: ScopeSet([.settingsWrite])).token
        for mode in AuthMode.allCases {
            let claims = DeviceClaims(credentials: credentials, mode: mode)
            for context in [ServerContext(method: "m", metadata: ["authorization": "Bearer " + token]),
                            ServerContext(method: "m", authToken: token)] {
                #expect(try claims.claim(phone, issuedBy: "SaveSettings", context: context) == nil)
            }
        }
        #expect(!credentials.isClaimed(phone))
    }
}
