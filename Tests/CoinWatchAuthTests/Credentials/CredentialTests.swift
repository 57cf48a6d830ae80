import CoinWatchCore
@testable import CoinWatchAuth
import CoinWatchModel
import CoinWatchTLS
import Testing

@Suite("credential parsing")
struct CredentialTests {
    static let secret = [UInt8](0..<32)
    static let keyToken = Credential.serviceKeyToken(id: "0123456789abcdef", secret: secret)

    static func parse(_ text: String) throws(CredentialFailure) -> Credential {
        try Credential(token: Array(text.utf8))
    }

    @Test("a service key token names its id and carries its 32 secret bytes")
    func serviceKey() throws {
        #expect(Self.keyToken.hasPrefix("cwk_0123456789abcdef_"))
        #expect(Self.keyToken.utf8.count == 64)
        #expect(try Self.parse(Self.keyToken) == .serviceKey(id: "0123456789abcdef", secret: Self.secret))
    }

    @Test("a device token names its device in canonical form and carries its secret")
    func deviceToken() throws {
        let device = try DeviceID(validating: "3F2504E0_4F89_11D3_9A0C_0305E82C3301")
        let token = Credential.deviceToken(device: device, secret: Self.secret)
        #expect(token.hasPrefix("cwd_"))
        #expect(try Self.parse(token) == .deviceSecret(device: device, secret: Self.secret))
        let odd = try DeviceID(validating: "phone:1.a-b_c")
        #expect(try Self.parse(Credential.deviceToken(device: odd, secret: Self.secret)) == .deviceSecret(device: odd, secret: Self.secret))
    }

    @Test("a mangled CoinWatch token is malformed, not an opaque token", arguments: [
        "cwk_", "cwk_0123456789abcdef", "cwk_0123456789ABCDEF_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
        "cwk_0123456789abcdef-AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
        "cwk_0123456789abcdef_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh",
        "cwk_0123456789abcdef_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8A",
        "cwk_0123456789abcdef_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+",
        "cwd_", "cwd_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
        "cwd_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8_",
        "cwd_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8_cGhvbmUgMQ",  // "phone 1": not a device id
        // A UUID in upper case: a valid device id, but not the spelling the server puts in a token.
        "cwd_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8_M0YyNTA0RTAtNEY4OS0xMUQzLTlBMEMtMDMwNUU4MkMzMzAx",
    ])
    func malformed(_ text: String) {
        #expect(throws: CredentialFailure.malformed) { try Self.parse(text) }
    }

    @Test("anything else is an opaque token, within limits")
    func opaque() throws {
        #expect(try Self.parse("s3cret") == .opaque(Array("s3cret".utf8)))
        #expect(throws: CredentialFailure.malformed) { try Self.parse("") }
        #expect(throws: CredentialFailure.malformed) { try Self.parse("has space") }
        #expect(throws: CredentialFailure.malformed) { try Self.parse("tøken") }
        #expect(throws: CredentialFailure.malformed) { try Self.parse(String(repeating: "x", count: 513)) }
        #expect(try Self.parse(String(repeating: "x", count: 512)) == .opaque([UInt8](repeating: UInt8(ascii: "x"), count: 512)))
    }

    @Test("log names never hold the secret")
    func logNames() throws {
        let key = try Self.parse(Self.keyToken)
        #expect(key.logName == "key 0123456789abcdef")
        #expect(!key.logName.contains(Base64.encodeURL(Self.secret)))
        #expect(try Self.parse("s3cret").logName.contains("s3cret") == false)
    }

    @Test("authorization values: Bearer in any case and spacing; the bare token only on the native protocol")
    func authorizationValues() throws {
        func token(_ value: String, _ source: AuthorizationValue.Source) throws(CredentialFailure) -> String? {
            try AuthorizationValue.token(in: value, source: source)
        }
        for source in [AuthorizationValue.Source.native, .http] {
            #expect(try token("Bearer abc", source) == "abc")
            #expect(try token("bearer abc", source) == "abc")
            #expect(try token("BEARER   abc  ", source) == "abc")
            #expect(try token(" \tBearer abc", source) == "abc")
            #expect(try token("Bearer \t abc", source) == "abc")   // a tab after the scheme (found by the fuzzer)
            #expect(throws: CredentialFailure.malformed) { try token("Bearer \t", source) }
            #expect(try token("", source) == nil)
            #expect(try token("   ", source) == nil)
            #expect(throws: CredentialFailure.malformed) { try token("Bearer ", source) }
            #expect(throws: CredentialFailure.malformed) { try token("bearer", source) }
        }
        #expect(try token("abc", .native) == "abc")
        #expect(try token("Basic dXNlcjpwYXNz", .native) == "Basic dXNlcjpwYXNz")
        #expect(throws: CredentialFailure.malformed) { try token("abc", .http) }
        #expect(throws: CredentialFailure.malformed) { try token("Basic dXNlcjpwYXNz", .http) }
        #expect(try token("Bearerabc", .native) == "Bearerabc")
    }

    @Test("scopes parse from names and comma lists, and an unknown one is named in the error")
    func scopes() throws {
        let set = try ScopeSet(names: ["settings:read,prices:read", " admin "])
        #expect(set.scopes == [.settingsRead, .pricesRead, .admin])
        #expect(set.description == "settings:read,prices:read,admin")
        #expect(ScopeSet(Scope.allCases).scopes == Scope.allCases)
        let error = #expect(throws: AuthError.self) { try ScopeSet(names: ["settings:red"]) }
        #expect(error?.message.hasPrefix("unknown scope 'settings:red'; the scopes are settings:read, settings:write") == true)
        #expect(throws: AuthError.self) { try ScopeSet(names: [","]) }
        #expect(throws: AuthError.self) { try ScopeSet(names: []) }
    }
}

@Suite("secret hashes")
struct SecretHashTests {
    @Test("a hash survives its stored byte form and matches only its own secret")
    func roundTrip() throws {
        let secret = [UInt8](repeating: 7, count: 32)
        let hash = SecretHash(of: secret)
        #expect(hash.bytes == SHA256.hash(secret))
        #expect(SecretHash(bytes: hash.bytes) == hash)
        #expect(SecretHash(bytes: [1, 2, 3]) == nil)
        #expect(hash.matches(secret))
        var other = secret
        other[31] = 8
        #expect(!hash.matches(other))
        #expect(SecretHash(of: other) != hash)
    }
}
