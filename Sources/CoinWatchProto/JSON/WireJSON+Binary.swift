/// The other way: a JSON request's binary encoding, written while the document is read, for the plain documents
/// clients send.
///
/// A JSON request was read into a `JSONValue` tree, decoded into the message's value type and packed by
/// protobuf-c: three representations of a few bytes. For a document whose members come in field-number order,
/// the encoding can be written member by member as the reader passes them, and it is the same bytes packing
/// writes (fields in number order, defaults left out except a oneof's member, map entries sorted by key).
///
/// The document is read by `JSONReader` under the rules the decoder reads it by, so a syntax error is found
/// either way; but everything the mapping allows beyond the plain forms is left to the decoder, which writes the
/// encoding or the error: members out of field-number order or given twice (under either name), a key or string
/// with an escape, `null`, an integer with a fraction or exponent or a leading zero, enums and bytes, an unknown
/// member when unknown members are refused, two members of a oneof, map keys out of order or empty. Tests hold
/// the two to the same bytes on the canonical JSON of random messages of every type and on mutated documents.
extension WireJSON {
    /// The encoding of `json`, a document for the message `schema` describes; nil when it is left to the decoder.
    static func binary(_ json: UnsafeRawBufferPointer, schema: WireSchema, options: JSONDecodingOptions) -> [UInt8]? {
        guard json.count <= options.maxBytes else { return nil }
        var writer = BinaryWriter(ignoreUnknownFields: options.ignoreUnknownFields)
        writer.out.reserveCapacity(json.count)
        do {
            try JSONReader.read(json, options: .strict(maxDepth: options.maxDepth)) { (reader) throws(JSONSyntaxError) in
                try writer.message(&reader, schema)
            }
        } catch {
            return nil
        }
        return writer.gaveUp ? nil : writer.out
    }

    private struct BinaryWriter {
        let ignoreUnknownFields: Bool
        var out: [UInt8] = []
        /// Set at the first thing left to the decoder; the rest of the document is then only skipped.
        var gaveUp = false

        init(ignoreUnknownFields: Bool) {
            self.ignoreUnknownFields = ignoreUnknownFields
        }

        /// An object's members, as the fields of `schema`.
        mutating func message(_ reader: inout JSONReader, _ schema: WireSchema) throws(JSONSyntaxError) {
            guard reader.current == UInt8(ascii: "{") else {
                gaveUp = true
                return try reader.skip()
            }
            var lastNumber: UInt32 = 0
            var oneofsSeen: UInt64 = 0
            try reader.object { (reader, key) throws(JSONSyntaxError) in
                guard !gaveUp, !key.escaped else {
                    gaveUp = true
                    return try reader.skip()
                }
                guard let field = schema.field(jsonName: key.bytes) else {
                    if !ignoreUnknownFields { gaveUp = true }
                    return try reader.skip()
                }
                guard field.number > lastNumber else {
                    gaveUp = true
                    return try reader.skip()
                }
                lastNumber = field.number
                if case .oneof(let index) = field.json.cardinality {
                    let bit: UInt64 = 1 << UInt64(index & 63)
                    guard index < 64, oneofsSeen & bit == 0 else {
                        gaveUp = true
                        return try reader.skip()
                    }
                    oneofsSeen |= bit
                }
                try member(&reader, field)
            }
        }

        /// One member's value, as `field`'s.
        mutating func member(_ reader: inout JSONReader, _ field: WireSchema.Field) throws(JSONSyntaxError) {
            switch field.json.cardinality {
            case .singular:
                try value(&reader, field, omitDefault: true)
            case .optionalMessage, .oneof:
                try value(&reader, field, omitDefault: false)
            case .repeated:
                guard reader.current == UInt8(ascii: "[") else {
                    gaveUp = true
                    return try reader.skip()
                }
                try reader.array { (reader, _) throws(JSONSyntaxError) in
                    guard !gaveUp else { return try reader.skip() }
                    try value(&reader, field, omitDefault: false)
                }
            case .map:
                guard reader.current == UInt8(ascii: "{"), case .message(let entrySchema) = field.kind,
                    let valueField = entrySchema.field(2)
                else {
                    gaveUp = true
                    return try reader.skip()
                }
                var previousKey: UnsafeRawBufferPointer?
                try reader.object { (reader, key) throws(JSONSyntaxError) in
                    // Packing sorts entries by key; a document whose keys ascend is already in that order.
                    guard !gaveUp, !key.escaped, !key.bytes.isEmpty,
                        previousKey.map({ $0.lexicographicallyPrecedes(key.bytes) }) ?? true
                    else {
                        gaveUp = true
                        return try reader.skip()
                    }
                    previousKey = key.bytes
                    let entryStart = beginDelimited(field)
                    out.append(0x0A)
                    Varint.append(UInt64(key.bytes.count), to: &out)
                    out.append(contentsOf: key.bytes)
                    // An entry's fields are proto3 fields: a scalar value at its default is left out.
                    try value(&reader, valueField, omitDefault: true)
                    endDelimited(from: entryStart)
                }
            }
        }

        /// One value: its tag and its encoding, or nothing when `omitDefault` and it is the default.
        mutating func value(
            _ reader: inout JSONReader, _ field: WireSchema.Field, omitDefault: Bool
        ) throws(JSONSyntaxError) {
            if case .message = field.json.form {
                guard reader.current == UInt8(ascii: "{"), case .message(let nested) = field.kind else {
                    gaveUp = true
                    return try reader.skip()
                }
                let start = beginDelimited(field)
                try message(&reader, nested)
                endDelimited(from: start)
                return
            }
            let token = try reader.token()
            guard !gaveUp else { return }
            switch (field.json.form, token) {
            case (.string, .string(let text)) where !text.escaped:
                guard !(omitDefault && text.bytes.isEmpty) else { return }
                tag(field)
                Varint.append(UInt64(text.bytes.count), to: &out)
                out.append(contentsOf: text.bytes)
            case (.bool, .bool(let flag)):
                guard !(omitDefault && !flag) else { return }
                tag(field)
                out.append(flag ? 1 : 0)
            case (_, .number), (_, .string):
                // An integer, as a number or a string; the plain forms only.
                guard let digits = Self.integerText(token), let integer = Self.plainInteger(digits),
                    let bits = Self.bits(integer, field.json.form)
                else {
                    gaveUp = true
                    return
                }
                guard !(omitDefault && bits == 0) else { return }
                tag(field)
                switch field.json.form {
                case .fixed32, .sfixed32:
                    withUnsafeBytes(of: UInt32(truncatingIfNeeded: bits).littleEndian) { out.append(contentsOf: $0) }
                case .fixed64, .sfixed64:
                    withUnsafeBytes(of: bits.littleEndian) { out.append(contentsOf: $0) }
                default:
                    Varint.append(bits, to: &out)
                }
            default:
                gaveUp = true
            }
        }

        /// A number's bytes, or a string's when it has no escape.
        static func integerText(_ token: JSONReader.Token) -> UnsafeRawBufferPointer? {
            switch token {
            case .number(let bytes): bytes
            case .string(let text) where !text.escaped: text.bytes
            default: nil
            }
        }

        /// What the field's encoding holds for `integer`: the varint's value (zigzagged for `sint`, sign-extended
        /// for a negative `int32`, as protobuf-c packs it) or the fixed field's bits; nil for a value outside the
        /// field's range or a field that is not an integer (the decoder then says which).
        static func bits(_ integer: (negative: Bool, magnitude: UInt64), _ form: WireSchema.JSONForm) -> UInt64? {
            let (negative, magnitude) = integer
            func signed(_ limit: UInt64) -> Int64? {
                if negative { return magnitude <= limit + 1 ? Int64(bitPattern: 0 &- magnitude) : nil }
                return magnitude <= limit ? Int64(magnitude) : nil
            }
            switch form {
            case .int32, .sfixed32:
                guard let value = signed(UInt64(Int32.max)) else { return nil }
                return form.isFixed ? UInt64(UInt32(bitPattern: Int32(value))) : UInt64(bitPattern: value)
            case .sint32:
                guard let value = signed(UInt64(Int32.max)) else { return nil }
                return UInt64(UInt32(truncatingIfNeeded: Varint.zigzag(value)))
            case .int64, .sfixed64:
                return signed(UInt64(Int64.max)).map { UInt64(bitPattern: $0) }
            case .sint64:
                return signed(UInt64(Int64.max)).map(Varint.zigzag)
            case .uint32, .fixed32:
                return !negative && magnitude <= UInt64(UInt32.max) ? magnitude : nil
            case .uint64, .fixed64:
                return negative ? nil : magnitude
            default:
                return nil
            }
        }

        /// `-?(0|[1-9][0-9]*)` as sign and magnitude; nil for anything else (a fraction, an exponent, `-0`, a leading
        /// zero, more than 64 bits), which `ExactInteger` reads on the decoder's path.
        static func plainInteger(_ text: UnsafeRawBufferPointer) -> (negative: Bool, magnitude: UInt64)? {
            var index = 0
            let negative = text.first == UInt8(ascii: "-")
            if negative { index = 1 }
            guard index < text.count, text.count - index <= 20,
                text[index] != UInt8(ascii: "0") || text.count - index == 1
            else { return nil }
            var magnitude: UInt64 = 0
            while index < text.count {
                let digit = text[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
                guard !overflow1, !overflow2 else { return nil }
                magnitude = sum
                index += 1
            }
            guard !(negative && magnitude == 0) else { return nil }
            return (negative, magnitude)
        }

        mutating func tag(_ field: WireSchema.Field) {
            Varint.append(UInt64(field.number) << 3 | field.kind.wireType, to: &out)
        }

        /// Writes the field's tag and room for a one-byte length; returns where the body starts.
        mutating func beginDelimited(_ field: WireSchema.Field) -> Int {
            tag(field)
            out.append(0)
            return out.count
        }

        /// Writes the length of the body from `start`, widening its room when it needs more than one byte.
        mutating func endDelimited(from start: Int) {
            let length = UInt64(out.count - start)
            guard length >= 0x80 else {
                out[start - 1] = UInt8(length)
                return
            }
            var prefix: [UInt8] = []
            Varint.append(length, to: &prefix)
            out.replaceSubrange((start - 1)..<start, with: prefix)
        }

    }
}

extension WireSchema.JSONForm {
    fileprivate var isFixed: Bool {
        switch self {
        case .fixed32, .sfixed32, .fixed64, .sfixed64: true
        default: false
        }
    }
}

extension WireSchema {
    /// The field a JSON member names, by its JSON name or its `.proto` name (the mapping accepts either).
    func field(jsonName key: UnsafeRawBufferPointer) -> Field? {
        for field in fields {
            let quoted = UnsafeRawBufferPointer(start: field.json.key.utf8Start, count: field.json.key.utf8CodeUnitCount)
            // The stored key is `"name":`; compare what stands between its quotes.
            if quoted.count == key.count + 3, quoted[1..<(quoted.count - 2)].elementsEqual(key) { return field }
            if field.name.utf8.elementsEqual(key) { return field }
        }
        return nil
    }
}
