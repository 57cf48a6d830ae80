/// The steps every generated decoder and encoder share; the generated bridge supplies the C calls.

/// Decodes through protobuf-c: size guard, `unpack` (into a scratch arena when it can), string validation,
/// conversion.
///
/// protobuf-c parses first because it is the authority on the encoding (and checks lengths and counts against
/// the input); WireValidator then walks the same bytes for what protobuf-c does not check. When protobuf-c
/// rejects the input, WireValidator is asked for a more precise reason.
///
/// `unpackInArena` builds the C tree in an arena that goes once the value is converted, with no malloc or free per
/// block; it gives nil when protobuf-c rejected the input or dropped a block it had unpacked (a field sent more
/// than once), which an arena would keep. The input is then unpacked again by `unpack`, with malloc, and released
/// by `free`: such input, and input protobuf-c rejects, is parsed once more than before, well-formed input once.
@inline(__always)
func decodeThroughProtobufC<CMessage, Value: WireMessage>(
    _ bytes: UnsafeRawBufferPointer,
    maxBytes: Int,
    schema: WireSchema,
    unpackInArena: (inout ScratchArena, Int, UnsafePointer<UInt8>) -> UnsafeMutablePointer<CMessage>?,
    unpack: (Int, UnsafePointer<UInt8>) -> UnsafeMutablePointer<CMessage>?,
    free: (UnsafeMutablePointer<CMessage>) -> Void,
    convert: (UnsafePointer<CMessage>) -> Value
) throws(WireDecodingError) -> Value {
    guard bytes.count <= maxBytes else {
        throw WireDecodingError(
            code: .tooLarge, typeName: schema.name,
            message: "\(schema.name): \(bytes.count) bytes exceed the limit of \(maxBytes)"
        )
    }
    guard let base = bytes.baseAddress, !bytes.isEmpty else {
        return Value()
    }
    let data = base.assumingMemoryBound(to: UInt8.self)
    let inArena: Result<Value, WireDecodingError>? = withScratchArena { arena in
        guard let message = unpackInArena(&arena, bytes.count, data) else { return nil }
        do throws(WireDecodingError) {
            try WireValidator.validate(bytes, schema: schema)
        } catch {
            return .failure(error)
        }
        return .success(convert(message))
    }
    if let inArena {
        return try inArena.get()
    }
    guard let message = unpack(bytes.count, data) else {
        throw WireValidator.explainRejection(bytes, schema: schema)
    }
    defer { free(message) }
    try WireValidator.validate(bytes, schema: schema)
    return convert(message)
}

/// A new array holding what `pack` writes; `count` is protobuf-c's `get_packed_size` of the message.
@inline(__always)
func packedBytes(count: Int, _ pack: (UnsafeMutablePointer<UInt8>) -> Int) -> [UInt8] {
    guard count > 0 else { return [] }
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        guard let base = buffer.baseAddress else { return }
        let written = pack(base)
        // protobuf-c writes exactly get_packed_size bytes; anything else means memory was already overrun.
        precondition(written == count, "protobuf-c packed \(written) bytes after promising \(count)")
        initialized = written
    }
}

/// Appends what `pack` writes to `buffer`; `count` is protobuf-c's `get_packed_size` of the message.
@inline(__always)
func appendPacked(to buffer: inout [UInt8], count: Int, _ pack: (UnsafeMutablePointer<UInt8>) -> Int) {
    guard count > 0 else { return }
    let start = buffer.count
    buffer.append(contentsOf: repeatElement(0, count: count))
    buffer.withUnsafeMutableBufferPointer { all in
        guard let base = all.baseAddress else { return }
        let written = pack(base + start)
        precondition(written == count, "protobuf-c packed \(written) bytes after promising \(count)")
    }
}

/// A map's entries in the order every encoding writes them (binary and JSON): by the UTF-8 bytes of their keys,
/// so output is deterministic.
@inline(__always)
func sortedEntries<Value>(_ map: [String: Value]) -> [(key: String, value: Value)] {
    map.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
}
