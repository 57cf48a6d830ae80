/// The proto3 JSON of an encoded message, written in one walk over its bytes.
///
/// A JSON answer was the binary answer decoded whole (checked by WireValidator, unpacked by protobuf-c, converted
/// to the value types) and the value written out: over two thirds of what JSON added to a Connect call. But the
/// answers are the server's own encodings, which are canonical: minimal varints, fields in number order, each
/// once, no unknown fields. So their JSON can be written field by field as the bytes are read, driven by the
/// generated WireSchema tables, with no decode and no allocation but the output.
///
/// The walk writes exactly what the generated encoder (`JSONMessage.writeJSON`) writes for the decoded message,
/// and only where that is certain. Wherever the bytes hold something on which the two could differ, it gives
/// up and the caller decodes the message whole, which writes what the mapping says or throws the decoding
/// error: a malformed or non-minimal encoding, a field out of declaration order or given twice (protobuf keeps
/// the last, or merges messages), an unknown field, two members of one oneof, a string with invalid UTF-8 or a
/// NUL, a map entry that is not its key then its value, or two entries with one key. Tests hold the two to the
/// same bytes on random messages of every type and on encodings built to hit each of those cases.
enum WireJSON {
    /// The JSON of `bytes`, an encoding of the message `schema` describes; nil when the walk gives up.
    static func json(_ bytes: UnsafeRawBufferPointer, schema: WireSchema) -> [UInt8]? {
        var writer = JSONWriter()
        guard message(bytes, schema, &writer, depth: 0) else { return nil }
        return writer.bytes
    }

    private static func message(
        _ bytes: UnsafeRawBufferPointer, _ schema: WireSchema, _ writer: inout JSONWriter, depth: Int
    ) -> Bool {
        guard depth <= WireValidator.maxDepth else { return false }
        writer.beginObject()
        var cursor = ProtobufCursor(bytes)
        var lastPosition = -1
        var oneofsSeen: UInt64 = 0
        while !cursor.isAtEnd {
            guard let field = nextField(&cursor, schema), field.json.position > lastPosition else { return false }
            lastPosition = field.json.position
            switch field.json.cardinality {
            case .singular:
                guard value(&cursor, field, key: true, omitDefault: true, &writer, depth: depth) else { return false }
            case .optionalMessage:
                guard value(&cursor, field, key: true, omitDefault: false, &writer, depth: depth) else { return false }
            case .oneof(let index):
                // The canonical encoder writes a set member even at its default; protobuf keeps the last of two.
                let bit: UInt64 = 1 << UInt64(index & 63)
                guard index < 64, oneofsSeen & bit == 0 else { return false }
                oneofsSeen |= bit
                guard value(&cursor, field, key: true, omitDefault: false, &writer, depth: depth) else { return false }
            case .repeated:
                writer.quotedKey(field.json.key)
                writer.beginArray()
                repeat {
                    guard value(&cursor, field, key: false, omitDefault: false, &writer, depth: depth) else {
                        return false
                    }
                } while takeTag(of: field, &cursor)
                writer.endArray()
            case .map:
                guard map(&cursor, field, &writer, depth: depth) else { return false }
            }
        }
        writer.endObject()
        return true
    }

    /// Reads a tag and returns its field, nil for a malformed tag, an unknown field or the wrong wire type.
    @inline(__always)
    private static func nextField(_ cursor: inout ProtobufCursor, _ schema: WireSchema) -> WireSchema.Field? {
        guard let key = cursor.minimalVarint(), key >> 3 != 0, key <= UInt64(UInt32.max),
            let field = schema.field(UInt32(truncatingIfNeeded: key >> 3)), field.kind.wireType == key & 7
        else { return nil }
        return field
    }

    /// Consumes the next tag when it is `field`'s again (the next element of a list or entry of a map).
    @inline(__always)
    private static func takeTag(of field: WireSchema.Field, _ cursor: inout ProtobufCursor) -> Bool {
        var ahead = cursor
        guard !ahead.isAtEnd, let key = ahead.minimalVarint(), key == UInt64(field.number) << 3 | field.kind.wireType
        else { return false }
        cursor = ahead
        return true
    }

    /// Reads one value of `field` and writes it, its key first when `key`, or nothing when `omitDefault` and it is
    /// the type's default; false when the bytes are not a value the walk can be sure of.
    private static func value(
        _ cursor: inout ProtobufCursor, _ field: WireSchema.Field, key: Bool, omitDefault: Bool,
        _ writer: inout JSONWriter, depth: Int
    ) -> Bool {
        // protobuf-c reads a 32-bit field's varint as its low 32 bits, so truncation is what the decoder sees.
        switch field.json.form {
        case .int32:
            guard let raw = cursor.minimalVarint() else { return false }
            let value = Int32(truncatingIfNeeded: raw)
            guard !(omitDefault && value == 0) else { return true }
            if key { writer.quotedKey(field.json.key) }
            writer.number(value)
        case .sint32:
            guard let raw = cursor.minimalVarint() else { return false }
            let value = Int32(truncatingIfNeeded: Varint.unzigzag(UInt64(UInt32(truncatingIfNeeded: raw))))
            guard !(omitDefault && value == 0) else { return true }
            if key { writer.quotedKey(field.json.key) }
            writer.number(value)
        case .uint32:
            guard let raw = cursor.minimalVarint() else { return false }
            let value = UInt32(truncatingIfNeeded: raw)
            guard !(omitDefault && value == 0) else { return true }
            if key { writer.quotedKey(field.json.key) }
            writer.number(value)
        case .sfixed32, .fixed32:
            guard let raw = cursor.bytes(4) else { return false }
            let bits = UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self))
            guard !(omitDefault && bits == 0) else { return true }
            if key { writer.quotedKey(field.json.key) }
            if case .sfixed32 = field.json.form { writer.number(Int32(bitPattern: bits)) } else { writer.number(bits) }
        case .int64, .uint64, .sint64:
            guard let raw = cursor.minimalVarint() else { return false }
            guard !(omitDefault && raw == 0) else { return true }
            if key { writer.quotedKey(field.json.key) }
            switch field.json.form {
            case .int64: writer.quotedNumber(Int64(bitPattern: raw))
            case .sint64: writer.quotedNumber(Varint.unzigzag(raw))
            default: writer.quotedNumber(raw)
            }
        case .sfixed64, .fixed64:
            guard let raw = cursor.bytes(8) else { return false }
            let bits = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
            guard !(omitDefault && bits == 0) else { return true }
            if key { writer.quotedKey(field.json.key) }
            if case .sfixed64 = field.json.form {
                writer.quotedNumber(Int64(bitPattern: bits))
            } else {
                writer.quotedNumber(bits)
            }
        case .bool:
            guard let raw = cursor.minimalVarint() else { return false }
            guard !(omitDefault && raw == 0) else { return true }
            if key { writer.quotedKey(field.json.key) }
            writer.bool(raw != 0)
        case .enumeration(let name):
            guard let raw = cursor.minimalVarint() else { return false }
            let number = Int32(truncatingIfNeeded: raw)
            guard !(omitDefault && number == 0) else { return true }
            if key { writer.quotedKey(field.json.key) }
            if let name = name(number) { writer.schemaName(name) } else { writer.number(number) }
        case .string:
            guard let text = cursor.minimalDelimited(), UTF8Check.firstProblem(text, from: 0, to: text.count) == nil
            else { return false }
            guard !(omitDefault && text.isEmpty) else { return true }
            if key { writer.quotedKey(field.json.key) }
            writer.string(utf8: text)
        case .bytes:
            guard let data = cursor.minimalDelimited() else { return false }
            guard !(omitDefault && data.isEmpty) else { return true }
            if key { writer.quotedKey(field.json.key) }
            writer.base64(data)
        case .message:
            guard let body = cursor.minimalDelimited(), case .message(let nested) = field.kind else { return false }
            if key { writer.quotedKey(field.json.key) }
            return message(body, nested, &writer, depth: depth + 1)
        }
        return true
    }

    /// A map's entries, from the first (whose tag is read) through every one that follows it, as one object with
    /// its keys in byte order, as the canonical encoder sorts them. Entries usually arrive sorted (one, or
    /// written from a sorted source); otherwise they are gathered and sorted first.
    private static func map(
        _ cursor: inout ProtobufCursor, _ field: WireSchema.Field, _ writer: inout JSONWriter, depth: Int
    ) -> Bool {
        guard case .message(let entrySchema) = field.kind, let valueField = entrySchema.field(2) else { return false }
        // First pass: every entry well formed, and whether their keys ascend.
        let start = cursor
        var count = 0
        var ascending = true
        var previousKey: UnsafeRawBufferPointer?
        repeat {
            guard let body = cursor.minimalDelimited(), let entry = mapEntry(body, valueField) else { return false }
            if let previousKey {
                guard !previousKey.elementsEqual(entry.key) else { return false }
                if !previousKey.lexicographicallyPrecedes(entry.key) { ascending = false }
            }
            previousKey = entry.key
            count += 1
        } while takeTag(of: field, &cursor)
        let end = cursor

        writer.quotedKey(field.json.key)
        writer.beginObject()
        if ascending {
            cursor = start
            for index in 0..<count {
                if index > 0 { _ = takeTag(of: field, &cursor) }
                guard let body = cursor.minimalDelimited(), let entry = mapEntry(body, valueField),
                    mapValue(entry, valueField, &writer, depth: depth)
                else { return false }
            }
        } else {
            var entries: [(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)] = []
            entries.reserveCapacity(count)
            cursor = start
            for index in 0..<count {
                if index > 0 { _ = takeTag(of: field, &cursor) }
                guard let body = cursor.minimalDelimited(), let entry = mapEntry(body, valueField) else { return false }
                entries.append(entry)
            }
            entries.sort { $0.key.lexicographicallyPrecedes($1.key) }
            for (index, entry) in entries.enumerated() {
                guard index == 0 || !entries[index - 1].key.elementsEqual(entry.key),
                    mapValue(entry, valueField, &writer, depth: depth)
                else { return false }
            }
        }
        writer.endObject()
        cursor = end
        return true
    }

    /// An entry's key and the bytes of its value, when the entry is exactly its string key then its value (an
    /// entry leaving either out means the default, which the walk leaves to the decoder).
    private static func mapEntry(_ body: UnsafeRawBufferPointer, _ valueField: WireSchema.Field)
        -> (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
    {
        var entry = ProtobufCursor(body)
        guard entry.take(0x0A), let key = entry.minimalDelimited(),
            UTF8Check.firstProblem(key, from: 0, to: key.count) == nil,
            let tag = entry.minimalVarint(), tag == UInt64(valueField.number) << 3 | valueField.kind.wireType
        else { return nil }
        return (key, UnsafeRawBufferPointer(rebasing: body[entry.index...]))
    }

    /// One entry's key and value (a map's values are written even at their default).
    private static func mapValue(
        _ entry: (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer), _ valueField: WireSchema.Field,
        _ writer: inout JSONWriter, depth: Int
    ) -> Bool {
        writer.key(utf8: entry.key)
        var value = ProtobufCursor(entry.value)
        return Self.value(&value, valueField, key: false, omitDefault: false, &writer, depth: depth) && value.isAtEnd
    }
}
