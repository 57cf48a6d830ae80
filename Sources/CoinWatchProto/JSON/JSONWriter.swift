import CoinWatchCore

/// Compact JSON written straight into bytes, as the generated encoders drive it.
///
/// Commas are placed by the writer: every key and every value first writes one when something precedes it at the
/// same level. Field names come from the schema as static strings (already valid JSON keys); map keys and string
/// values are escaped: quotes, backslashes and control characters, nothing else, so non-ASCII text stays UTF-8.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    /// Room for a typical response, so small messages are written without regrowing.
    public init() {
        bytes.reserveCapacity(256)
    }

    @inline(__always)
    private mutating func comma() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    public mutating func beginObject() {
        comma()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func beginArray() {
        comma()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A field name that needs no escaping (the schema's JSON names are identifiers).
    public mutating func key(_ name: StaticString) {
        comma()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// A field name already quoted and followed by its colon, as the schema tables hold it: one piece of output.
    mutating func quotedKey(_ key: StaticString) {
        comma()
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        needsComma = false
    }

    /// A name from the schema (an enum value's) as a string value; it needs no escaping.
    public mutating func schemaName(_ name: StaticString) {
        comma()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Any key, escaped (map keys).
    public mutating func key(_ name: String) {
        comma()
        Self.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func string(_ value: String) {
        comma()
        Self.appendQuoted(value, to: &bytes)
        needsComma = true
    }

    /// A map key given as UTF-8 the caller has checked, escaped.
    mutating func key(utf8 name: UnsafeRawBufferPointer) {
        comma()
        Self.appendQuoted(utf8: name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// A string value given as UTF-8 the caller has checked, escaped.
    mutating func string(utf8 value: UnsafeRawBufferPointer) {
        comma()
        Self.appendQuoted(utf8: value, to: &bytes)
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        comma()
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
        needsComma = true
    }

    /// A 32-bit integer as a JSON number.
    public mutating func number<I: FixedWidthInteger>(_ value: I) {
        comma()
        appendDecimal(value, quoted: false)
        needsComma = true
    }

    /// A 64-bit integer as a JSON string, as proto3 JSON requires: JavaScript numbers lose digits past 2^53.
    public mutating func quotedNumber<I: FixedWidthInteger>(_ value: I) {
        comma()
        appendDecimal(value, quoted: true)
        needsComma = true
    }

    /// Bytes as standard base64 with padding (RFC 4648 §4), as proto3 JSON writes them.
    public mutating func base64(_ value: some Collection<UInt8>) {
        comma()
        bytes.append(UInt8(ascii: "\""))
        Base64.encode(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// JSON text produced elsewhere (a nested encoding), written as one value.
    public mutating func raw(_ json: [UInt8]) {
        comma()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    /// The digits (with a sign, in quotes if asked) written backwards into a small buffer and appended in one piece.
    private mutating func appendDecimal<I: FixedWidthInteger>(_ value: I, quoted: Bool) {
        // The magnitude as UInt64 (every field integer fits): 20 digits at most, a sign and two quotes.
        let negative = I.isSigned && value < 0
        var magnitude = UInt64(truncatingIfNeeded: value.magnitude)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { digits in
            var start = 24
            if quoted {
                start -= 1
                digits[start] = UInt8(ascii: "\"")
            }
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            if negative {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            if quoted {
                start -= 1
                digits[start] = UInt8(ascii: "\"")
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// `value` as a JSON string literal appended to `out`.
    static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        var value = value
        value.withUTF8 { appendQuoted(utf8: UnsafeRawBufferPointer($0), to: &out) }
    }

    /// UTF-8 text (already checked) as a JSON string literal appended to `out`.
    ///
    /// Runs of bytes that need no escape (all of a typical id or symbol) are appended in one piece; only a quote, a
    /// backslash or a control character is written on its own.
    static func appendQuoted(utf8 bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in bytes.indices {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < index { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index])) }
            runStart = index + 1
            out.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            default:
                let low = byte & 0xF
                out.append(contentsOf: "u00".utf8)
                out.append(UInt8(ascii: "0") + (byte >> 4))
                out.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + (low - 10))
            }
        }
        if runStart < bytes.count { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart...])) }
        out.append(UInt8(ascii: "\""))
    }
}
