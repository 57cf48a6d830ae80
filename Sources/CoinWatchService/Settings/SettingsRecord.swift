import CoinWatchProto
import Foundation

/// Reads a stored `coinwatch.v1.Settings` record in place, without building the message, when it is in exactly the
/// form this server's encoder writes.
///
/// Loading a store decodes every device's record; through the general decoder that is a protobuf-c tree, a
/// validation walk, a dictionary and its strings per device, most of the start-up time for a million devices. Nearly
/// every record is one this server wrote, so the load checks the bytes against the one encoding the encoder produces
/// and keeps them as they are: the `GetSettings` answer is those bytes behind a header of a few bytes, and the
/// message itself is decoded only when something asks for it. A record in any other form — written by another
/// tool, with unknown fields, or damaged — takes the general decoder and its error messages.
///
/// The accepted form (proto3 as protobuf-c packs it, from `proto/coinwatch/v1/coinwatch.proto`):
///
///     Settings := [0x0A len device_id] {0x12 len RulesEntry} [0x18 version] [0x20 updated_at_ms]
///     RulesEntry := 0x0A len symbol 0x12 len AlertRule      (symbols strictly ascending, 2–10 of A-Z 0-9)
///     AlertRule := [0x0A len Decimal] [0x12 len Decimal]
///     Decimal := [0x08 zigzag mantissa] [0x10 scale]         (scale 1...18)
///
/// with every varint minimal, every default-valued scalar left out, and `device_id` equal to the key's id. Anything
/// accepted here decodes with the general decoder to a message that encodes back to the same bytes; the tests check
/// that property on random and mutated records.
enum SettingsRecord {
    /// One side of a rule as stored: `mantissa × 10^−scale`; a zero mantissa means the side is off.
    struct StoredDecimal: Hashable, Sendable {
        var mantissa: Int64
        var scale: Int
    }

    /// The largest record accepted: the general decoder's limit.
    static let maxBytes = 4 * 1024 * 1024

    /// Whether `record` is in the canonical form for the device whose id bytes are `deviceID`, calling `rule` with
    /// each rule (symbol bytes, below, above) as it goes. A `false` may come after some `rule` calls.
    static func scan(
        _ record: UnsafeRawBufferPointer,
        deviceID: UnsafeRawBufferPointer,
        rule: (_ symbol: UnsafeRawBufferPointer, _ below: StoredDecimal?, _ above: StoredDecimal?) -> Void = { _, _, _ in }
    ) -> Bool {
        guard record.count <= maxBytes, !deviceID.isEmpty else { return false }
        var reader = ProtobufCursor(record)
        guard reader.take(0x0A), let id = reader.minimalDelimited(), id.count == deviceID.count,
              let idBase = id.baseAddress, let expectedBase = deviceID.baseAddress,
              memcmp(idBase, expectedBase, id.count) == 0
        else {
            return false
        }
        var previousSymbol: UnsafeRawBufferPointer?
        while reader.take(0x12) {
            guard var entry = reader.minimalDelimited().map(ProtobufCursor.init),
                  entry.take(0x0A), let symbol = entry.minimalDelimited(), isSymbol(symbol),
                  entry.take(0x12), var value = entry.minimalDelimited().map(ProtobufCursor.init), entry.isAtEnd
            else {
                return false
            }
            if let previousSymbol, !previousSymbol.lexicographicallyPrecedes(symbol) { return false }
            previousSymbol = symbol
            var below: StoredDecimal?
            var above: StoredDecimal?
            if value.take(0x0A) {
                guard let bytes = value.minimalDelimited(), let decimal = decimal(bytes) else { return false }
                below = decimal
            }
            if value.take(0x12) {
                guard let bytes = value.minimalDelimited(), let decimal = decimal(bytes) else { return false }
                above = decimal
            }
            guard value.isAtEnd else { return false }
            rule(symbol, below, above)
        }
        if reader.take(0x18) {
            guard let version = reader.minimalVarint(), version != 0 else { return false }
        }
        if reader.take(0x20) {
            guard let updatedAt = reader.minimalVarint(), updatedAt != 0 else { return false }
        }
        return reader.isAtEnd
    }

    /// The `GetSettingsResponse` carrying `record`: field 1, length-delimited.
    static func encodedResponse(wrapping record: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: responseSize(wrapping: record)) { buffer, initialized in
            initialized = writeResponse(wrapping: record, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// The size of `encodedResponse(wrapping: record)`.
    static func responseSize(wrapping record: UnsafeRawBufferPointer) -> Int {
        1 + Varint.size(UInt64(record.count)) + record.count
    }

    /// Writes `encodedResponse(wrapping: record)` into `buffer` (at least `responseSize` bytes); returns its size.
    static func writeResponse(wrapping record: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var cursor = buffer.baseAddress!
        cursor.storeBytes(of: 0x0A, as: UInt8.self)
        cursor += 1
        Varint.write(UInt64(record.count), to: &cursor)
        if let base = record.baseAddress, !record.isEmpty {
            cursor.copyMemory(from: base, byteCount: record.count)
            cursor += record.count
        }
        return cursor - buffer.baseAddress!
    }

    static func record(inResponse response: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var reader = ProtobufCursor(response)
        guard reader.take(0x0A), let record = reader.minimalDelimited(), reader.isAtEnd else { return nil }
        return record
    }

    private static func isSymbol(_ bytes: UnsafeRawBufferPointer) -> Bool {
        (2...10).contains(bytes.count) && bytes.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
    }

    private static func decimal(_ bytes: UnsafeRawBufferPointer) -> StoredDecimal? {
        var reader = ProtobufCursor(bytes)
        var result = StoredDecimal(mantissa: 0, scale: 0)
        if reader.take(0x08) {
            guard let zigzagged = reader.minimalVarint(), zigzagged != 0 else { return nil }
            result.mantissa = Varint.unzigzag(zigzagged)
        }
        if reader.take(0x10) {
            guard let scale = reader.minimalVarint(), (1...18).contains(scale) else { return nil }
            result.scale = Int(scale)
        }
        return reader.isAtEnd ? result : nil
    }
}
