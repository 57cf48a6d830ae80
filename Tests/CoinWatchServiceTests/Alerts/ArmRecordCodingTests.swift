import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchStore
import Testing
@testable import CoinWatchService

/// The binary `alert:arm:<device>` value: round trips, and every kind of damage is a `corruption` error naming the
/// record and the byte.
@Suite
struct ArmRecordCodingTests {
    static let key = Array("alert:arm:phone-1".utf8)

    static func decode(_ value: [UInt8]) throws(StoreError) -> [ArmStateRecord] {
        try decodeArmRecord(value, key: key, device: try! DeviceID(validating: "phone-1"))
    }

    static func decodeError(_ value: [UInt8]) -> StoreError? {
        do throws(StoreError) {
            _ = try decode(value)
            return nil
        } catch {
            return error
        }
    }

    @Test func randomRecordsRoundTrip() throws {
        var random = SplitMix64(seed: 0xA11CE)
        let device = try DeviceID(validating: "phone-1")
        let symbols = ["BTC", "ETH", "SOL", "DOGE", "X2", "ABCDEFGHIJ"].map { try! Symbol(validating: $0) }
        for _ in 0..<500 {
            var records: [ArmStateRecord] = []
            for symbol in symbols where random.next() % 2 == 0 {
                for direction in AlertDirection.allCases where random.next() % 3 != 0 {
                    let mantissa = Int64(random.next() % 1_000_000_000_000) + 1
                    let threshold = ExactDecimal(mantissa: mantissa, scale: Int(random.next() % 19))!
                    let state: ArmState = switch random.next() % 3 {
                    case 0: .awaitingPrice
                    case 1: .armed(generation: random.next() >> (random.next() % 64))
                    default: .disarmed
                    }
                    records.append(
                        ArmStateRecord(device: device, symbol: symbol, direction: direction, threshold: threshold, state: state)
                    )
                }
            }
            let encoded = ArmRecordCoding.encode(records.shuffled(using: &random))
            let decoded = try Self.decode(encoded)
            #expect(Set(decoded) == Set(records))
            #expect(decoded.count == records.count)
            // Deterministic: the same sides encode to the same bytes whatever their order.
            #expect(ArmRecordCoding.encode(decoded) == encoded)
        }
    }

    @Test func extremeValuesRoundTrip() throws {
        let device = try DeviceID(validating: "phone-1")
        let records = [
            ArmStateRecord(
                device: device, symbol: try Symbol(validating: "BTC"), direction: .above,
                threshold: ExactDecimal(mantissa: .max, scale: 18)!, state: .armed(generation: .max)
            ),
            ArmStateRecord(
                device: device, symbol: try Symbol(validating: "BTC"), direction: .below,
                threshold: ExactDecimal(mantissa: 1, scale: 18)!, state: .armed(generation: 0)
            ),
        ]
        #expect(Set(try Self.decode(ArmRecordCoding.encode(records))) == Set(records))
    }

    @Test func damagedValuesAreCorruptionWithTheRecordAndByte() throws {
        let device = try DeviceID(validating: "phone-1")
        let valid = ArmRecordCoding.encode([
            ArmStateRecord(
                device: device, symbol: try Symbol(validating: "BTC"), direction: .above,
                threshold: ExactDecimal(mantissa: 700_000, scale: 1)!, state: .armed(generation: 300)
            ),
        ])
        let cases: [(value: [UInt8], message: String)] = [
            ([], "the value is empty at byte 0 of 0"),
            ([9], "unknown format 9 at byte 1 of 1"),
            ([1, 1, 0x41], "a symbol length outside 2...10 at byte 2 of 3"),
            ([1, 3, 0x42, 0x54], "a truncated symbol at byte 2 of 4"),
            ([1, 3, 0x62, 0x74, 0x63, 1], "a symbol outside A-Z 0-9 at byte 5 of 6"),
            ([1, 3, 0x42, 0x54, 0x43, 0], "no valid side mask at byte 6 of 6"),
            ([1, 3, 0x42, 0x54, 0x43, 1, 7], "an unknown arm state at byte 7 of 7"),
            ([1, 3, 0x42, 0x54, 0x43, 1, 2, 0x80], "a malformed threshold at byte 8 of 8"),
            ([1, 3, 0x42, 0x54, 0x43, 1, 2, 0, 0], "a threshold that is not a positive decimal at byte 9 of 9"),
            ([1, 3, 0x42, 0x54, 0x43, 1, 2, 2, 19], "a threshold that is not a positive decimal at byte 9 of 9"),
            ([1, 3, 0x42, 0x54, 0x43, 1, 1, 2, 0], "a malformed generation at byte 9 of 9"),
            (Array(valid.dropLast()), "a malformed generation at byte \(valid.count - 1) of \(valid.count - 1)"),
            (valid + Array(valid.dropFirst()), "symbol BTC out of order at byte \(valid.count + 4) of \(valid.count * 2 - 1)"),
        ]
        for (value, message) in cases {
            let error = try #require(Self.decodeError(value), "\(value) decoded")
            #expect(error.code == .corruption)
            #expect(error.message == "record 'alert:arm:phone-1': \(message)")
        }
    }

    @Test func everyTruncationAndByteFlipIsAnErrorOrAValidRecordNeverACrash() throws {
        let device = try DeviceID(validating: "phone-1")
        let valid = ArmRecordCoding.encode([
            ArmStateRecord(
                device: device, symbol: try Symbol(validating: "BTC"), direction: .above,
                threshold: ExactDecimal(mantissa: 7_012_345, scale: 2)!, state: .armed(generation: 123_456)
            ),
            ArmStateRecord(
                device: device, symbol: try Symbol(validating: "ETH"), direction: .below,
                threshold: ExactDecimal(2500), state: .disarmed
            ),
        ])
        for length in 0..<valid.count {
            // A cut is an error, unless it falls right after a whole symbol: then it holds fewer sides.
            if let error = Self.decodeError(Array(valid.prefix(length))) {
                #expect(error.code == .corruption)
            } else {
                #expect(try Self.decode(Array(valid.prefix(length))).count < 2)
            }
        }
        for position in valid.indices {
            for bit in 0..<8 {
                var damaged = valid
                damaged[position] ^= 1 << bit
                if let error = Self.decodeError(damaged) {
                    #expect(error.code == .corruption)
                } else {
                    // Still well formed (a changed threshold digit, say): what it holds survives a round trip.
                    let decoded = try Self.decode(damaged)
                    #expect(try Self.decode(ArmRecordCoding.encode(decoded)) == decoded.sortedForComparison)
                }
            }
        }
    }
}

extension Array where Element == ArmStateRecord {
    /// In the order `ArmRecordCoding.encode` writes: by symbol bytes, above before below.
    var sortedForComparison: [ArmStateRecord] {
        sorted { lhs, rhs in
            lhs.symbol.rawValue.utf8.lexicographicallyPrecedes(rhs.symbol.rawValue.utf8)
                || (lhs.symbol == rhs.symbol && lhs.direction == .above && rhs.direction == .below)
        }
    }
}
