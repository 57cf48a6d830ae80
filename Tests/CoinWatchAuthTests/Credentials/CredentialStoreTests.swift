import CoinWatchCore
@testable import CoinWatchAuth
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore
import CoinWatchTestSupport
import CoinWatchTLS
import Testing

/// A credential store over a LevelDB database in a temporary directory, reopened as a restart would.
final class StoreFixture {
    let directory: TemporaryDirectory
    private(set) var database: Database
    private(set) var store: CredentialStore

    init(publishToken: String? = nil) throws {
        directory = try TemporaryDirectory(prefix: "auth-store")
        database = try Database(path: directory.path + "/db")
        store = try CredentialStore(database: database, publishToken: publishToken, clock: { 1_700_000_000_000 })
    }

    /// Closes and reopens the database and loads the store afresh from it.
    func reopen(publishToken: String? = nil) throws {
        database.close()
        database = try Database(path: directory.path + "/db")
        store = try CredentialStore(database: database, publishToken: publishToken, clock: { 1_700_000_000_001 })
    }

    deinit { database.close() }
}

func authenticate(_ store: CredentialStore, _ token: String) -> Result<Principal, CredentialFailure> {
    do {
        return store.authenticate(try Credential(token: Array(token.utf8)))
    } catch {
        return .failure(error)
    }
}

/// `token` with one character of its secret changed: still well formed, so it fails as a wrong secret. The
/// character changed is the second to last, which carries six bits of the secret; the last one's low bits must
/// be zero in strict base64url, so changing it could make the token malformed instead.
func withWrongSecret(_ token: String) -> String {
    var bytes = Array(token.utf8)
    bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    return String(decoding: bytes, as: UTF8.self)
}

@Suite("credential store")
struct CredentialStoreTests {
    @Test("a created key authenticates with its scopes, is listed without its secret, and survives a restart")
    func createKey() throws {
        let fixture = try StoreFixture()
        let (key, token) = try fixture.store.createKey(name: "feeder", scopes: ScopeSet([.pricesPublish, .pricesRead]))
        #expect(token.hasPrefix("cwk_\(key.id)_"))
        #expect(key.name == "feeder" && key.scopes == ["prices:read", "prices:publish"] && !key.revoked)
        #expect(key.createdAtMs == 1_700_000_000_000)
        #expect(authenticate(fixture.store, token) == .success(.key(id: key.id, scopes: ScopeSet([.pricesRead, .pricesPublish]))))
        #expect(fixture.store.listKeys() == [key])
        try fixture.reopen()
        #expect(fixture.store.listKeys() == [key])
        #expect(authenticate(fixture.store, token) == .success(.key(id: key.id, scopes: ScopeSet([.pricesRead, .pricesPublish]))))
        // The store holds the hash of the secret, never the token or the secret.
        let secretText = String(token.dropFirst(21))
        for entry in try fixture.database.scan(prefix: Array("auth:".utf8)) {
            let value = String(decoding: entry.value, as: UTF8.self)
            #expect(!value.contains(token) && !value.contains(secretText))
        }
    }

    @Test("a wrong secret, an unknown id and a revoked key do not authenticate")
    func failures() throws {
        let fixture = try StoreFixture()
        let (key, token) = try fixture.store.createKey(name: "", scopes: ScopeSet([.settingsRead]))
        #expect(authenticate(fixture.store, withWrongSecret(token)) == .failure(.wrongSecret))
        let unknown = "cwk_ffffffffffffffff" + token.dropFirst(20)
        #expect(authenticate(fixture.store, String(unknown)) == .failure(.unknownKey))
        #expect(authenticate(fixture.store, "s3cret") == .failure(.unknownToken))
        let before = fixture.store.generation
        let revoked = try fixture.store.revokeKey(key.id)
        #expect(revoked.revoked && revoked.revokedAtMs == 1_700_000_000_000)
        #expect(fixture.store.generation > before)
        #expect(authenticate(fixture.store, token) == .failure(.revoked))
        // Revoking again changes nothing, and the key stays revoked after a restart.
        let generation = fixture.store.generation
        #expect(try fixture.store.revokeKey(token) == revoked)
        #expect(fixture.store.generation == generation)
        try fixture.reopen()
        #expect(authenticate(fixture.store, token) == .failure(.revoked))
        #expect(fixture.store.listKeys(includeRevoked: false).isEmpty)
        #expect(fixture.store.listKeys(includeRevoked: true).map(\.id) == [key.id])
    }

    @Test("revoking names the key by id or token, and explains a bad id")
    func revokeErrors() throws {
        let fixture = try StoreFixture()
        #expect(throws: AuthError(code: .notFound, message: "no key with id '0123456789abcdef'")) {
            try fixture.store.revokeKey("0123456789abcdef")
        }
        let error = #expect(throws: AuthError.self) { try fixture.store.revokeKey("nope") }
        #expect(error?.code == .invalidArgument)
        #expect(throws: AuthError.self) { try fixture.store.createKey(name: "bad\nname", scopes: ScopeSet([.admin])) }
        #expect(throws: AuthError.self) { try fixture.store.createKey(name: String(repeating: "n", count: 65), scopes: ScopeSet([.admin])) }
        #expect(throws: AuthError.self) { try fixture.store.createKey(name: "none", scopes: ScopeSet([])) }
    }

    @Test("the publish token acts as a key with prices:publish only")
    func publishToken() throws {
        let fixture = try StoreFixture(publishToken: "s3cret")
        #expect(fixture.store.hasPublishToken)
        #expect(authenticate(fixture.store, "s3cret") == .success(.key(id: "publish-token", scopes: ScopeSet([.pricesPublish]))))
        #expect(authenticate(fixture.store, "s3cre") == .failure(.unknownToken))
        #expect(authenticate(fixture.store, "s3crett") == .failure(.unknownToken))
        #expect(try CredentialStore(database: nil, publishToken: "").hasPublishToken == false)
    }

    @Test("a device claim becomes valid only when finished as stored, and one device's secret never works for another")
    func deviceClaims() throws {
        let fixture = try StoreFixture()
        let phone = try DeviceID(validating: "phone-1")
        let other = try DeviceID(validating: "phone-2")
        let claim = try #require(try fixture.store.beginClaim(phone, issuedBy: "SaveSettings"))
        #expect(fixture.store.isClaimed(phone))
        #expect(try fixture.store.beginClaim(phone, issuedBy: "SaveSettings") == nil)
        #expect(authenticate(fixture.store, claim.token) == .failure(.unclaimedDevice))
        try fixture.database.put(claim.recordKey, claim.recordValue, sync: true)
        fixture.store.finishClaim(claim, stored: true)
        #expect(authenticate(fixture.store, claim.token) == .success(.device(phone)))
        #expect(fixture.store.claimedDeviceCount == 1)

        // The same secret with another device's id in the token: not that device's secret.
        let secret = try #require(Base64.decodeURL(claim.token.dropFirst(4).prefix(43)))
        let forged = Credential.deviceToken(device: other, secret: secret)
        #expect(authenticate(fixture.store, forged) == .failure(.unclaimedDevice))
        let otherToken = try #require(try fixture.store.claim(other, issuedBy: "RegisterDevice"))
        #expect(authenticate(fixture.store, forged) == .failure(.wrongSecret))
        #expect(authenticate(fixture.store, otherToken) == .success(.device(other)))
        #expect(try fixture.store.claim(other, issuedBy: "RegisterDevice") == nil)

        try fixture.reopen()
        #expect(authenticate(fixture.store, claim.token) == .success(.device(phone)))
        #expect(authenticate(fixture.store, otherToken) == .success(.device(other)))
    }

    @Test("a failed claim frees the device for the next claim")
    func failedClaim() throws {
        let store = try CredentialStore(database: nil)
        let phone = try DeviceID(validating: "phone-1")
        let claim = try #require(try store.beginClaim(phone, issuedBy: "SaveSettings"))
        store.finishClaim(claim, stored: false)
        #expect(!store.isClaimed(phone))
        #expect(authenticate(store, claim.token) == .failure(.unclaimedDevice))
        let next = try #require(try store.beginClaim(phone, issuedBy: "SaveSettings"))
        // Finishing a claim that is not the current one changes nothing.
        store.finishClaim(claim, stored: true)
        #expect(authenticate(store, claim.token) == .failure(.unclaimedDevice))
        store.finishClaim(next, stored: true)
        #expect(authenticate(store, next.token) == .success(.device(phone)))
    }

    @Test("an operator reset forgets the secret at once, or replaces it, and waits out a claim in progress")
    func reset() throws {
        let fixture = try StoreFixture()
        let phone = try DeviceID(validating: "phone-1")
        let token = try #require(try fixture.store.claim(phone, issuedBy: "SaveSettings"))
        let generation = fixture.store.generation
        let (had, none) = try fixture.store.resetDevice(phone, issueSecret: false)
        #expect(had && none == nil)
        #expect(fixture.store.generation > generation)
        #expect(authenticate(fixture.store, token) == .failure(.unclaimedDevice))
        #expect(!fixture.store.isClaimed(phone))
        try fixture.reopen()
        #expect(!fixture.store.isClaimed(phone))

        let (hadAgain, fresh) = try fixture.store.resetDevice(phone, issueSecret: true)
        let newToken = try #require(fresh)
        #expect(!hadAgain)
        #expect(authenticate(fixture.store, newToken) == .success(.device(phone)))
        try fixture.reopen()
        #expect(authenticate(fixture.store, newToken) == .success(.device(phone)))

        let pending = try #require(try fixture.store.beginClaim(try DeviceID(validating: "phone-3"), issuedBy: "SaveSettings"))
        #expect(throws: AuthError.self) { try fixture.store.resetDevice(pending.device, issueSecret: false) }
        fixture.store.finishClaim(pending, stored: false)
    }

    @Test("a damaged record stops the load with the record named", arguments: [
        ("auth:key:0123456789abcdef", [UInt8]([0xFF, 0xFF])),
        ("auth:key:0123456789abcdef", V1.StoredServiceKey(id: "fedcba9876543210", scopes: ["admin"], secretSha256: [UInt8](repeating: 1, count: 32)).serializedBytes()),
        ("auth:key:0123456789abcdef", V1.StoredServiceKey(id: "0123456789abcdef", scopes: ["admin"], secretSha256: [1, 2]).serializedBytes()),
        ("auth:key:0123456789abcdef", V1.StoredServiceKey(id: "0123456789abcdef", scopes: ["root"], secretSha256: [UInt8](repeating: 1, count: 32)).serializedBytes()),
        ("auth:device:Not A Device", V1.StoredDeviceSecret(secretSha256: [UInt8](repeating: 1, count: 32)).serializedBytes()),
        ("auth:device:phone-1", V1.StoredDeviceSecret(secretSha256: []).serializedBytes()),
    ])
    func corruption(_ key: String, _ value: [UInt8]) throws {
        let fixture = try StoreFixture()
        try fixture.database.put(Array(key.utf8), value, sync: true)
        let error = #expect(throws: AuthError.self) { try fixture.reopen() }
        #expect(error?.code == .corruption)
        #expect(error?.message.contains("record '\(key)'") == true)
    }
}
