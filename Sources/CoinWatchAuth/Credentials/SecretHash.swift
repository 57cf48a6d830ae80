import CoinWatchTLS

/// The SHA-256 of a secret: what the credential store keeps instead of the secret.
///
/// A secret here is 32 random bytes, so one unsalted hash is the right verifier: nothing short of guessing 256
/// bits finds a secret from its hash, and a slow password hash would only slow every authentication. Held as four
/// words so a table of a million devices' hashes costs no allocation per device.
struct SecretHash: Sendable, Hashable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// The hash of `secret`.
    init(of secret: some Collection<UInt8>) {
        self.init(bytes: SHA256.hash(secret))!
    }

    /// A stored hash; nil unless it is 32 bytes.
    init?(bytes: [UInt8]) {
        guard bytes.count == SHA256.byteCount else { return nil }
        var words: [UInt64] = [0, 0, 0, 0]
        for (index, byte) in bytes.enumerated() {
            words[index / 8] = words[index / 8] << 8 | UInt64(byte)
        }
        self.words = (words[0], words[1], words[2], words[3])
    }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(SHA256.byteCount)
        for word in [words.0, words.1, words.2, words.3] {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return out
    }

    /// Whether `secret` hashes to this, compared in time independent of where the hashes differ.
    func matches(_ secret: some Collection<UInt8>) -> Bool {
        ConstantTime.equal(SHA256.hash(secret), bytes)
    }

    static func == (lhs: SecretHash, rhs: SecretHash) -> Bool { ConstantTime.equal(lhs.bytes, rhs.bytes) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
