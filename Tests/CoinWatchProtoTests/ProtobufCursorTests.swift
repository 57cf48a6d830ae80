import CoinWatchProto
import Testing

@Suite("ProtobufCursor")
struct ProtobufCursorTests {
    /// Runs `body` with a cursor over `bytes`.
    func reading<T>(_ bytes: [UInt8], _ body: (inout ProtobufCursor) -> T) -> T {
        bytes.withUnsafeBytes { raw in
            var cursor = ProtobufCursor(raw)
            return body(&cursor)
        }
    }

    @Test("varints read back what Varint writes, up to the 64th bit", arguments: [
        0, 1, 127, 128, 300, 16_383, 16_384, UInt64(UInt32.max), UInt64.max >> 1, UInt64.max,
    ])
    func varintRoundTrip(value: UInt64) {
        var encoded: [UInt8] = []
        Varint.append(value, to: &encoded)
        #expect(reading(encoded) { cursor in (cursor.varint(), cursor.isAtEnd) } == (value, true))
        #expect(reading(encoded) { $0.minimalVarint() } == value)
    }

    @Test("zigzag maps small magnitudes of either sign to small varints and back", arguments: [
        (Int64(0), UInt64(0)), (-1, 1), (1, 2), (-2, 3), (Int64.max, UInt64.max - 1), (Int64.min, UInt64.max),
    ])
    func zigzag(value: Int64, encoded: UInt64) {
        #expect(Varint.zigzag(value) == encoded)
        #expect(Varint.unzigzag(encoded) == value)
    }

    @Test("a varint that is truncated, longer than 10 bytes or past 64 bits is refused")
    func malformedVarints() {
        #expect(reading([0x80, 0x80]) { $0.varint() } == nil)
        #expect(reading([UInt8](repeating: 0x80, count: 10) + [0x01]) { $0.varint() } == nil)
        // Ten groups whose last carries more than the 64th bit.
        #expect(reading([UInt8](repeating: 0xFF, count: 9) + [0x02]) { $0.varint() } == nil)
    }

    @Test("a longer encoding of a shorter value is a varint but not a minimal one")
    func nonMinimal() {
        let paddedOne: [UInt8] = [0x81, 0x00]
        #expect(reading(paddedOne) { $0.varint() } == 1)
        #expect(reading(paddedOne) { $0.minimalVarint() } == nil)
        #expect(reading([0x02, 0x41, 0x42]) { $0.minimalDelimited().map(Array.init) } == [0x41, 0x42])
        #expect(reading([0x82, 0x00, 0x41, 0x42]) { $0.minimalDelimited() } == nil)
    }

    @Test("tags, taken bytes and length-delimited fields stop at the end of the buffer, keeping the index")
    func boundsAndIndex() {
        // field 1, wire type 2, three bytes announced but two present.
        let short: [UInt8] = [0x0A, 0x03, 0x41, 0x42]
        let outcome = reading(short) { cursor in
            (cursor.take(0x0A), cursor.index, cursor.delimited() == nil)
        }
        #expect(outcome == (true, 1, true))
        #expect(reading([0x0A]) { cursor in (cursor.take(0x12), cursor.index) } == (false, 0))
        #expect(reading([0x12, 0x01, 0x07]) { cursor in
            guard let (field, wireType) = cursor.tag(), let body = cursor.delimited() else { return false }
            return field == 2 && wireType == 2 && Array(body) == [0x07] && cursor.isAtEnd
        })
        #expect(reading([0x00]) { $0.tag() == nil }, "field number 0 is not a tag")
        #expect(reading([0x01, 0x02]) { cursor in (cursor.byte(), cursor.bytes(2) == nil, cursor.bytes(1).map(Array.init)) }
            == (0x01, true, [0x02]))
    }
}
