import CoinWatchProto

/// Just enough of the protobuf wire format to write the RPC envelope, and fields added to an already encoded
/// answer, by hand.
///
/// The envelope frames (`End`, `Message`, `Call`) wrap a payload that is already
/// encoded. Building them through the generated encoder would copy the payload
/// into a C struct and back out; writing the few envelope fields directly lets a
/// payload be placed once, or shared by many frames ("encode once, send many").
/// The same holds for a field appended to an answer encoded elsewhere (SaveSettings' warnings after the writer's
/// encoded response). Every writer here is checked against the generated decoder in the tests.
package struct ProtobufWriter {
    private(set) var pointer: UnsafeMutableRawPointer
    let end: UnsafeMutableRawPointer

    package init(_ buffer: UnsafeMutableRawBufferPointer) {
        pointer = buffer.baseAddress!
        end = buffer.baseAddress! + buffer.count
    }

    enum WireType: UInt64 {
        case varint = 0
        case lengthDelimited = 2
    }

    static func varintSize(_ value: UInt64) -> Int { Varint.size(value) }

    static func tagSize(_ field: Int) -> Int { varintSize(UInt64(field) << 3) }

    /// Size of a length-delimited field holding `length` bytes.
    package static func delimitedSize(field: Int, length: Int) -> Int {
        tagSize(field) + varintSize(UInt64(length)) + length
    }

    /// Size of a varint field, 0 when the value is the proto3 default.
    static func varintFieldSize(field: Int, _ value: UInt64) -> Int {
        value == 0 ? 0 : tagSize(field) + varintSize(value)
    }

    mutating func writeVarint(_ value: UInt64) {
        precondition(end - pointer >= Varint.size(value), "protobuf writer overflow")
        Varint.write(value, to: &pointer)
    }

    mutating func writeTag(_ field: Int, _ type: WireType) {
        writeVarint(UInt64(field) << 3 | type.rawValue)
    }

    /// Writes a varint field, omitting it when the value is the default (0).
    mutating func writeVarintField(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        writeTag(field, .varint)
        writeVarint(value)
    }

    /// Writes the tag and length of a length-delimited field whose bytes follow.
    package mutating func writeDelimitedHeader(_ field: Int, length: Int) {
        writeTag(field, .lengthDelimited)
        writeVarint(UInt64(length))
    }

    package mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        precondition(end - pointer >= bytes.count, "protobuf writer overflow")
        pointer.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        pointer += bytes.count
    }

    mutating func writeDelimited(_ field: Int, _ bytes: UnsafeRawBufferPointer) {
        writeDelimitedHeader(field, length: bytes.count)
        writeBytes(bytes)
    }

    package mutating func writeString(_ field: Int, _ text: String) {
        var text = text
        text.withUTF8 { writeDelimited(field, UnsafeRawBufferPointer($0)) }
    }

    package var isFull: Bool { pointer == end }
}
