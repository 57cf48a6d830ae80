import CoinWatchAlertEngine
import CoinWatchModel
import CoinWatchProto
import CoinWatchStore

/// The binary value of an `alert:arm:<device>` record: every rule side of one device with its arm state.
///
/// One record per device (instead of one text record per side) because a restart reads all of them: a million
/// devices with four sides each were four million text records to split, validate and parse, most of the start-up
/// time. The layout (see docs/STORAGE.md):
///
///     u8 format (1)
///     per symbol, in ascending byte order of the symbols:
///       u8 length (2...10), the symbol's bytes (A-Z 0-9)
///       u8 sides: bit 0 above, bit 1 below (at least one set)
///       per side present, above first:
///         u8 state: 0 awaiting a price, 1 armed, 2 disarmed
///         threshold: zigzag varint mantissa, u8 scale (0...18)
///         generation: varint, only when armed
///
/// A value that does not follow it is reported as a `corruption` `StoreError` naming the record and the byte.
enum ArmRecordCoding {
    static let format: UInt8 = 1

    /// Encodes one device's sides. `records` may come in any order and must all be the same device's.
    static func encode(_ records: [ArmStateRecord]) -> [UInt8] {
        let ordered = records.sorted { lhs, rhs in
            lhs.symbol.rawValue.utf8.lexicographicallyPrecedes(rhs.symbol.rawValue.utf8)
                || (lhs.symbol == rhs.symbol && lhs.direction == .above && rhs.direction == .below)
        }
        var bytes: [UInt8] = [format]
        bytes.reserveCapacity(1 + ordered.count * 16)
        var position = 0
        while position < ordered.count {
            let symbol = ordered[position].symbol
            var end = position
            while end < ordered.count, ordered[end].symbol == symbol { end += 1 }
            let group = ordered[position..<end]
            bytes.append(UInt8(symbol.rawValue.utf8.count))
            bytes.append(contentsOf: symbol.rawValue.utf8)
            var sides: UInt8 = 0
            for record in group { sides |= record.direction == .above ? 1 : 2 }
            bytes.append(sides)
            for record in group {
                switch record.state {
                case .awaitingPrice: bytes.append(0)
                case .armed: bytes.append(1)
                case .disarmed: bytes.append(2)
                }
                Varint.append(Varint.zigzag(record.threshold.mantissa), to: &bytes)
                bytes.append(UInt8(record.threshold.scale))
                if case .armed(let generation) = record.state {
                    Varint.append(generation, to: &bytes)
                }
            }
            position = end
        }
        return bytes
    }

    /// Decodes one device's record, calling `body` for each side in stored order.
    ///
    /// `symbols` caches the `Symbol` values already seen, so a load of many devices holding the same few symbols
    /// validates each spelling once.
    static func decode(
        _ value: UnsafeRawBufferPointer,
        key: [UInt8],
        symbols: inout SymbolCache,
        _ body: (Symbol, AlertDirection, ExactDecimal, ArmState) -> Void
    ) throws(StoreError) {
        var reader = ProtobufCursor(value)
        func fail(_ reason: String) -> StoreError {
            StoreError(
                code: .corruption,
                message: "record \(describeKey(key)): \(reason) at byte \(reader.index) of \(value.count)"
            )
        }
        guard let version = reader.byte() else { throw fail("the value is empty") }
        guard version == format else { throw fail("unknown format \(version)") }
        var previous: UnsafeRawBufferPointer?
        while !reader.isAtEnd {
            guard let length = reader.byte(), (2...10).contains(length) else {
                throw fail("a symbol length outside 2...10")
            }
            guard let text = reader.bytes(Int(length)) else { throw fail("a truncated symbol") }
            guard let symbol = symbols.symbol(text) else { throw fail("a symbol outside A-Z 0-9") }
            if let previous, !previous.lexicographicallyPrecedes(text) {
                throw fail("symbol \(symbol) out of order")
            }
            previous = text
            guard let sides = reader.byte(), (1...3).contains(sides) else { throw fail("no valid side mask") }
            for direction in AlertDirection.allCases where sides & (direction == .above ? 1 : 2) != 0 {
                guard let stateByte = reader.byte(), stateByte <= 2 else { throw fail("an unknown arm state") }
                guard let zigzagged = reader.varint() else { throw fail("a malformed threshold") }
                guard let scale = reader.byte(),
                      let threshold = ExactDecimal(mantissa: Varint.unzigzag(zigzagged), scale: Int(scale)),
                      threshold > .zero
                else {
                    throw fail("a threshold that is not a positive decimal")
                }
                let state: ArmState
                switch stateByte {
                case 0: state = .awaitingPrice
                case 1:
                    guard let generation = reader.varint() else { throw fail("a malformed generation") }
                    state = .armed(generation: generation)
                default: state = .disarmed
                }
                body(symbol, direction, threshold, state)
            }
        }
    }

    /// The key as text when printable, else hex; never shortened.
    static func describeKey(_ key: [UInt8]) -> String {
        StorageLayout.describe(key, limit: .max)
    }
}
