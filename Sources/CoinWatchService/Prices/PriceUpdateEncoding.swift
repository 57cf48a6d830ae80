import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// Writes the shared part of a `coinwatch.v1.PriceUpdate` (symbol, price, source time, stale, sources) and the
/// per-stream sequence-number suffix by hand.
///
/// The fan-out encodes each changed price once per loop and every subscriber's frame references the same bytes,
/// so this is on the hot path; the message is a few scalar fields, which is cheaper to lay out directly than to
/// build through the generated encoder. The tests decode the result with the generated decoder.
enum PriceUpdateEncoding {
    /// `PriceUpdate.sequence` is field 4, varint: tag `4 << 3 | 0`.
    static let sequenceTag: UInt8 = 0x20
    /// `PriceUpdate.snapshot` (field 7) and `snapshot_end` (field 8), bool varints.
    static let snapshotTag: UInt8 = 0x38
    static let snapshotEndTag: UInt8 = 0x40
    /// Tag byte plus the longest varint, then the two snapshot flags.
    static let maxSuffixBytes = 15

    /// Fields 1–3, 5 and 6 of a `PriceUpdate`; `sequence` (field 4) is left to the suffix.
    static func payload(
        symbol: Symbol, price: ExactDecimal, sourceTimeMs: Int64, sources: UInt32 = 0, stale: Bool = false
    ) -> SharedBytes {
        let count = payloadSize(symbol: symbol, price: price, sourceTimeMs: sourceTimeMs, sources: sources, stale: stale)
        return SharedBytes(count: count) { buffer in
            let written = writePayload(
                symbol: symbol, price: price, sourceTimeMs: sourceTimeMs, sources: sources, stale: stale, into: buffer)
            precondition(written == count, "PriceUpdate size mismatch")
        }
    }

    /// The size `writePayload` needs for these fields.
    static func payloadSize(
        symbol: Symbol, price: ExactDecimal, sourceTimeMs: Int64, sources: UInt32 = 0, stale: Bool = false
    ) -> Int {
        let symbolBytes = symbol.rawValue.utf8.count
        let decimalBytes = decimalSize(price)
        let time = UInt64(bitPattern: sourceTimeMs)
        return 1 + Varint.size(UInt64(symbolBytes)) + symbolBytes
            + 1 + Varint.size(UInt64(decimalBytes)) + decimalBytes
            + (time == 0 ? 0 : 1 + Varint.size(time))
            + (stale ? 2 : 0)
            + (sources == 0 ? 0 : 1 + Varint.size(UInt64(sources)))
    }

    /// Writes fields 1–3, 5 and 6 into `buffer` (at least `payloadSize` long); returns the bytes written.
    static func writePayload(
        symbol: Symbol, price: ExactDecimal, sourceTimeMs: Int64, sources: UInt32 = 0, stale: Bool = false,
        into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let zigzag = Varint.zigzag(price.mantissa)
        let scale = UInt64(price.scale)
        let time = UInt64(bitPattern: sourceTimeMs)
        let start = buffer.baseAddress!
        var cursor = start
        func byte(_ value: UInt8) {
            cursor.storeBytes(of: value, as: UInt8.self)
            cursor += 1
        }
        func varint(_ value: UInt64) {
            Varint.write(value, to: &cursor)
        }
        byte(0x0A)  // 1: symbol, length-delimited
        varint(UInt64(symbol.rawValue.utf8.count))
        for unit in symbol.rawValue.utf8 { byte(unit) }
        byte(0x12)  // 2: price, length-delimited Decimal
        varint(UInt64(decimalSize(price)))
        if zigzag != 0 {
            byte(0x08)  // Decimal.mantissa, sint64
            varint(zigzag)
        }
        if scale != 0 {
            byte(0x10)  // Decimal.scale, uint32
            varint(scale)
        }
        if time != 0 {
            byte(0x18)  // 3: source_time_ms, int64
            varint(time)
        }
        if stale {
            byte(0x28)  // 5: stale, bool
            byte(1)
        }
        if sources != 0 {
            byte(0x30)  // 6: sources, uint32
            varint(UInt64(sources))
        }
        return cursor - start
    }

    /// Bytes of the `Decimal` message for `price`.
    private static func decimalSize(_ price: ExactDecimal) -> Int {
        let zigzag = Varint.zigzag(price.mantissa)
        let scale = UInt64(price.scale)
        return (zigzag == 0 ? 0 : 1 + Varint.size(zigzag)) + (scale == 0 ? 0 : 1 + Varint.size(scale))
    }

    /// Writes `sequence` as field 4 into `buffer` (at least `maxSuffixBytes` long); returns the bytes written.
    @inline(__always)
    static func writeSequence(_ sequence: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let start = buffer.baseAddress!
        start.storeBytes(of: sequenceTag, as: UInt8.self)
        var cursor = start + 1
        Varint.write(sequence, to: &cursor)
        return cursor - start
    }

    /// Writes `sequence`, then `snapshot: true` and, for the snapshot's last message, `snapshot_end: true`, into
    /// `buffer` (at least `maxSuffixBytes` long); returns the bytes written.
    static func writeSnapshotSuffix(_ sequence: UInt64, isLast: Bool, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var count = writeSequence(sequence, into: buffer)
        buffer[count] = snapshotTag
        buffer[count + 1] = 1
        count += 2
        if isLast {
            buffer[count] = snapshotEndTag
            buffer[count + 1] = 1
            count += 2
        }
        return count
    }
}
