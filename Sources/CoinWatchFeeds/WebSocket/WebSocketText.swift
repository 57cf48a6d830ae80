/// The check RFC 6455 asks of a text message (§8.1: its payload is UTF-8), done on the payload where it lies
/// instead of by copying it into a `String`.
enum WebSocketText {
    static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Venue messages are ASCII: eight bytes at a time while none has its high bit set.
        var index = 0
        while bytes.count - index >= 8,
              bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
        {
            index += 8
        }
        while index < bytes.count, bytes[index] < 0x80 {
            index += 1
        }
        guard index < bytes.count else { return true }
        // From the first other byte on, the standard library's decoder judges: it refuses what `String(validating:)`
        // refuses (overlong forms, surrogates, anything above U+10FFFF, a cut sequence), without building anything.
        let rest = UnsafeRawBufferPointer(rebasing: bytes[index...])
        return !transcode(rest.makeIterator(), from: UTF8.self, to: UTF32.self, stoppingOnError: true) { _ in }
    }
}
