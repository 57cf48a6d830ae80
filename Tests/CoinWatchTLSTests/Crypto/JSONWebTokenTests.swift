import CoinWatchCore
import CoinWatchTLS
import CoinWatchTestSupport
import Foundation
import Testing

@Suite("JSON Web Tokens")
struct JSONWebTokenTests {
    @Test("a provider token has the exact header and claims, base64url without padding, and verifies")
    func providerToken() throws {
        let key = try ES256PrivateKey.generate()
        let token = try JSONWebToken.es256(keyID: "ABC123DEFG", issuer: "DEF123GHIJ", issuedAt: 1_437_179_036, key: key)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        #expect(Base64.decodeURL(parts[0]).map { String(decoding: $0, as: UTF8.self) } == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(Base64.decodeURL(parts[1]).map { String(decoding: $0, as: UTF8.self) } == #"{"iss":"DEF123GHIJ","iat":1437179036}"#)
        #expect(Base64.decodeURL(parts[2])?.count == 64)

        let verified = try #require(JSONWebToken.verifiedES256(token, key: try key.publicKey()))
        let claims = try JSONSerialization.jsonObject(with: Data(verified.claims)) as? [String: Any]
        #expect(claims?["iss"] as? String == "DEF123GHIJ")
        #expect((claims?["iat"] as? NSNumber)?.int64Value == 1_437_179_036)
        let header = try JSONSerialization.jsonObject(with: Data(verified.header)) as? [String: Any]
        #expect(header?["alg"] as? String == "ES256")
    }

    @Test("a token is refused with another key, after any change, or when it is not three base64url parts")
    func refusals() throws {
        let key = try ES256PrivateKey.generate()
        let publicKey = try key.publicKey()
        let token = try JSONWebToken.es256(keyID: "K", issuer: "T", issuedAt: 1, key: key)
        #expect(JSONWebToken.verifiedES256(token, key: try ES256PrivateKey.generate().publicKey()) == nil)
        let parts = token.split(separator: ".").map(String.init)
        let otherClaims = Base64.encodeURL(#"{"iss":"T","iat":2}"#.utf8)
        #expect(JSONWebToken.verifiedES256([parts[0], otherClaims, parts[2]].joined(separator: "."), key: publicKey) == nil)
        for bad in ["", "..", parts[0], parts[0] + "." + parts[1], token + ".", token + "=", "." + token,
                    parts[0] + "." + parts[1] + "." + parts[2].dropLast()] {
            #expect(JSONWebToken.verifiedES256(bad, key: publicKey) == nil, "\(bad)")
        }
        #expect(JSONWebToken.verifiedES256(token, key: publicKey) != nil)
    }

    @Test("RFC 7515's ES256 example token verifies")
    func rfcToken() throws {
        let publicKey = try ES256PublicKey(pem: RFC7515Example.publicKeyPEM.utf8)
        let verified = try #require(JSONWebToken.verifiedES256(RFC7515Example.token, key: publicKey))
        #expect(String(decoding: verified.header, as: UTF8.self) == #"{"alg":"ES256"}"#)
        #expect(String(decoding: verified.claims, as: UTF8.self).hasPrefix(#"{"iss":"joe","#))
    }

    @Test("strings are JSON-escaped and the token's signature checks out with the openssl command")
    func escapingAndOpenSSL() async throws {
        let key = try ES256PrivateKey.generate()
        let token = try JSONWebToken.es256(
            keyID: nil, claims: [("sub", .string("a\"b\\c\nd\u{1}é")), ("n", .integer(-5))], key: key)
        let parts = token.split(separator: ".").map(String.init)
        #expect(Base64.decodeURL(parts[0]).map { String(decoding: $0, as: UTF8.self) } == #"{"alg":"ES256"}"#)
        let claims = try #require(Base64.decodeURL(parts[1]))
        #expect(String(decoding: claims, as: UTF8.self) == #"{"sub":"a\"b\\c\nd\u0001é","n":-5}"#)
        let parsed = try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any]
        #expect(parsed?["sub"] as? String == "a\"b\\c\nd\u{1}é")

        let directory = try TemporaryDirectory(prefix: "jwt")
        let publicPath = directory.appending("public.pem").path
        let inputPath = directory.appending("input").path
        let signaturePath = directory.appending("signature").path
        try Data(try key.publicKeyPEM().utf8).write(to: URL(fileURLWithPath: publicPath))
        try Data((parts[0] + "." + parts[1]).utf8).write(to: URL(fileURLWithPath: inputPath))
        let der = try ECDSASignature.der(fromRaw: try #require(Base64.decodeURL(parts[2])))
        try Data(der).write(to: URL(fileURLWithPath: signaturePath))
        let result = try await OpenSSLCommand.run(
            ["dgst", "-sha256", "-verify", publicPath, "-signature", signaturePath, inputPath])
        #expect(result.status == 0, "\(result.stderr)")
    }
}
