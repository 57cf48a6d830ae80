import CoinWatchCore
import CoinWatchTLS
import CoinWatchTestSupport
import Testing

@Suite("Digests and HMAC")
struct DigestTests {
    @Test("SHA-1 and SHA-256 of FIPS 180's examples")
    func fipsVectors() {
        #expect(hex(SHA1.hash("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.hash([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(SHA256.hash("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(SHA256.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA1.hash([1]).count == SHA1.byteCount)
        #expect(SHA256.hash([1]).count == SHA256.byteCount)
    }

    @Test("the WebSocket accept key of RFC 6455 §1.3's example")
    func webSocketAccept() {
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        let accept = Base64.encode(SHA1.hash((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        #expect(accept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test("SHA-256 of a megabyte matches the openssl command")
    func largeInputAgainstOpenSSL() async throws {
        let data = (0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let result = try await OpenSSLCommand.succeed(["dgst", "-sha256", "-r"], input: data)
        #expect(result.output.hasPrefix(hex(SHA256.hash(data)) + " "))
    }

    @Test("HMAC-SHA256 of RFC 4231's test cases 1, 2, 6 and 7")
    func rfc4231() {
        #expect(
            hex(HMACSHA256.authenticationCode(key: [UInt8](repeating: 0x0B, count: 20), message: "Hi There".utf8))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            hex(HMACSHA256.authenticationCode(key: "Jefe".utf8, message: "what do ya want for nothing?".utf8))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let longKey = [UInt8](repeating: 0xAA, count: 131)
        #expect(
            hex(HMACSHA256.authenticationCode(
                key: longKey, message: "Test Using Larger Than Block-Size Key - Hash Key First".utf8))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        let message = "This is a test using a larger than block-size key and a larger than block-size data. "
            + "The key needs to be hashed before being used by the HMAC algorithm."
        #expect(
            hex(HMACSHA256.authenticationCode(key: longKey, message: message.utf8))
                == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    @Test("an empty key and an empty message are valid inputs, as the openssl command agrees")
    func emptyInputs() async throws {
        let code = HMACSHA256.authenticationCode(key: [UInt8](), message: [UInt8]())
        #expect(hex(code) == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
        let result = try await OpenSSLCommand.succeed(["dgst", "-sha256", "-hmac", "key", "-r"], input: Array("msg".utf8))
        #expect(result.output.hasPrefix(hex(HMACSHA256.authenticationCode(key: "key".utf8, message: "msg".utf8))))
    }

    @Test("isValid accepts the right code only")
    func validation() {
        let code = HMACSHA256.authenticationCode(key: "k".utf8, message: "m".utf8)
        #expect(HMACSHA256.isValid(code, key: "k".utf8, message: "m".utf8))
        #expect(!HMACSHA256.isValid(code, key: "k".utf8, message: "n".utf8))
        #expect(!HMACSHA256.isValid(code.dropLast(), key: "k".utf8, message: "m".utf8))
        var flipped = code
        flipped[31] ^= 1
        #expect(!HMACSHA256.isValid(flipped, key: "k".utf8, message: "m".utf8))
    }
}

@Suite("Random bytes and constant-time comparison")
struct SecretsTests {
    @Test("random bytes have the asked length and do not repeat")
    func random() throws {
        #expect(try SecureRandom.bytes(0).isEmpty)
        var seen = Set<[UInt8]>()
        for _ in 0..<100 {
            let bytes = try SecureRandom.bytes(16)
            #expect(bytes.count == 16)
            seen.insert(bytes)
        }
        #expect(seen.count == 100)
        // 4 KiB of a working generator is never all zeros.
        #expect(try SecureRandom.bytes(4096).contains { $0 != 0 })
    }

    @Test("equal compares bytes, whatever the collection type")
    func equality() {
        let a: [UInt8] = Array("secret-token-value".utf8)
        #expect(ConstantTime.equal(a, a))
        #expect(ConstantTime.equal(a, "secret-token-value".utf8))
        #expect(ConstantTime.equal([UInt8](), [UInt8]()))
        #expect(!ConstantTime.equal(a, a.dropLast()))
        #expect(!ConstantTime.equal(a, [UInt8]()))
        for index in a.indices {
            var other = a
            other[index] ^= 0x20
            #expect(!ConstantTime.equal(a, other))
        }
    }
}
