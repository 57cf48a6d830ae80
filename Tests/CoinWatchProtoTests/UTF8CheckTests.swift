@testable import CoinWatchProto
import Testing
import CoinWatchModel

@Suite("UTF-8 check", .serialized)
struct UTF8CheckTests {
    /// The reference: the standard library's validation, plus "no NUL".
    private func reference(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil && !bytes.contains(0)
    }

    private func check(_ bytes: [UInt8]) -> UTF8Check.Problem? {
        let padded: [UInt8] = [0xFF, 0xFF, 0xFF] + bytes + [0x41, 0x00]
        return padded.withUnsafeBytes { UTF8Check.firstProblem($0, from: 3, to: 3 + bytes.count) }
    }

    @Test("agrees with the standard library on every sequence of one and two bytes")
    func exhaustiveShort() {
        var disagreements = 0
        for first in 0...255 {
            let one = [UInt8(first)]
            if (check(one) == nil) != reference(one) { disagreements += 1 }
            for second in 0...255 {
                let two = [UInt8(first), UInt8(second)]
                if (check(two) == nil) != reference(two) { disagreements += 1 }
            }
        }
        #expect(disagreements == 0)
    }

    @Test("agrees with the standard library on 200,000 random sequences around the hard cases")
    func randomSequences() async {
        var rng = SeededGenerator(seed: 0x0007_F8B8)
        let interesting: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
            0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
        ]
        var disagreements: [[UInt8]] = []
        var valid = 0
        for round in 0..<200_000 {
            if round % 2000 == 0 { await Task.yield() }
            let count = Int.random(in: 0...14, using: &rng)
            let bytes = (0..<count).map { _ in
                Bool.random(using: &rng)
                    ? interesting[Int.random(in: 0..<interesting.count, using: &rng)]
                    : UInt8.random(in: 0x80...0xBF, using: &rng)
            }
            let mine = check(bytes) == nil
            if mine { valid += 1 }
            if mine != reference(bytes), disagreements.count < 5 { disagreements.append(bytes) }
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
        #expect(valid > 1000, "the sample must include valid sequences too")
    }

    @Test("reports the offset of the first problem and tells NUL apart")
    func offsets() {
        #expect(check(Array("abcdefghij".utf8) + [0x00])?.offset == 10)
        #expect(check(Array("abcdefghij".utf8) + [0x00])?.isNUL == true)
        #expect(check([0x41, 0xC3, 0x28])?.offset == 1)
        #expect(check([0x41, 0xC3, 0x28])?.isNUL == false)
        #expect(check(Array("ü😀abcdefgh".utf8) + [0xE2, 0x82]).map(\.offset) == 14)
        #expect(check([]) == nil)
    }
}
