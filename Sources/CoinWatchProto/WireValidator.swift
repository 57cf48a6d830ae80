/// A strictly bounds-checked walk over encoded bytes, guided by a WireSchema.
///
/// protobuf-c copies string fields as they are: it does not check UTF-8 and, storing strings NUL-terminated,
/// silently cuts one at an embedded NUL. This walk finds both (in map keys and values too, and in nested
/// messages) and names the field. It also checks the structure, so when protobuf-c rejects input without a
/// reason, the walk can usually say what and where.
enum WireValidator {
    /// Deeper than any acyclic schema of ours; guards the recursion regardless.
    static let maxDepth = 64

    /// Throws when a string field holds invalid UTF-8 or a NUL, or the structure is malformed.
    static func validate(_ bytes: UnsafeRawBufferPointer, schema: WireSchema) throws(WireDecodingError) {
        // Valid input, nearly all of it, is walked over plain tables; the walk that names the field runs only to
        // say what is wrong.
        if let shapes = schema.shapes, isValid(bytes, from: 0, to: bytes.count, UnsafeBufferPointer(shapes.shapes), depth: 0) {
            return
        }
        do {
            try walk(bytes, from: 0, to: bytes.count, schema: schema, depth: 0)
        } catch {
            throw error.decodingError(root: schema)
        }
        // The two walks check the same things; should they ever disagree, the input is refused all the same.
        throw WireDecodingError(code: .malformed, typeName: schema.name, message: "\(schema.name): not a valid encoding")
    }

    /// `walk`'s checks over `WireSchema.ShapeTable`s, taking no references: true when `walk` would find nothing.
    static func isValid(
        _ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int, _ shapes: UnsafeBufferPointer<WireSchema.Shape>,
        depth: Int
    ) -> Bool {
        guard depth <= maxDepth else { return false }
        var index = start
        while index < end {
            guard let tag = readVarint(bytes, &index, end), tag <= UInt64(UInt32.max), tag >> 3 != 0 else { return false }
            let number = Int(tag >> 3)
            let wireType = tag & 7
            let shape = number < shapes.count ? shapes[number] : nil
            if let expected = shape?.wireType, expected != wireType { return false }
            switch wireType {
            case 0:
                guard readVarint(bytes, &index, end) != nil else { return false }
            case 1, 5:
                let width = wireType == 1 ? 8 : 4
                guard end - index >= width else { return false }
                index += width
            case 2:
                guard let length = readVarint(bytes, &index, end), length <= UInt64(end - index) else { return false }
                let bodyStart = index
                index += Int(length)
                if let nested = shape?.nested {
                    if !isValid(bytes, from: bodyStart, to: index, nested, depth: depth + 1) { return false }
                } else if shape?.isString == true, UTF8Check.firstProblem(bytes, from: bodyStart, to: index) != nil {
                    return false
                }
            default:
                return false
            }
        }
        return true
    }

    /// The error for input protobuf-c refused: the walk's finding when it has one, else a generic one.
    static func explainRejection(_ bytes: UnsafeRawBufferPointer, schema: WireSchema) -> WireDecodingError {
        do {
            try walk(bytes, from: 0, to: bytes.count, schema: schema, depth: 0)
        } catch {
            return error.decodingError(root: schema)
        }
        return WireDecodingError(
            code: .malformed, typeName: schema.name,
            message: "\(schema.name): not a valid encoding (rejected by protobuf-c)"
        )
    }

    /// What the walk found, with the path of field names from the innermost field outwards.
    struct Failure: Error {
        var code: WireDecodingError.Code
        var detail: String
        var reversedPath: [String] = []

        func decodingError(root: WireSchema) -> WireDecodingError {
            let path = reversedPath.isEmpty ? nil : reversedPath.reversed().joined(separator: ".")
            let subject = path.map { "\(root.name).\($0)" } ?? root.name
            return WireDecodingError(code: code, typeName: root.name, fieldPath: path, message: "\(subject): \(detail)")
        }
    }

    static func walk(
        _ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int, schema: WireSchema, depth: Int
    ) throws(Failure) {
        guard depth <= maxDepth else {
            throw Failure(code: .malformed, detail: "nested deeper than \(maxDepth) messages")
        }
        var index = start
        while index < end {
            let tagOffset = index
            guard let tag = readVarint(bytes, &index, end) else {
                throw Failure(code: .malformed, detail: "truncated or overlong tag at byte \(tagOffset)")
            }
            guard tag <= UInt64(UInt32.max), tag >> 3 != 0 else {
                throw Failure(code: .malformed, detail: "invalid field number \(tag >> 3) at byte \(tagOffset)")
            }
            let number = UInt32(truncatingIfNeeded: tag >> 3)
            let wireType = tag & 7
            let field = schema.field(number)
            if let field, field.kind.wireType != wireType {
                throw Failure(
                    code: .malformed,
                    detail: "wire type \(wireType) where \(field.kind.wireType) is expected",
                    reversedPath: [field.name]
                )
            }
            switch wireType {
            case 0:
                guard readVarint(bytes, &index, end) != nil else {
                    throw Failure(code: .malformed, detail: "truncated or overlong varint", reversedPath: [name(field, number)])
                }
            case 1, 5:
                let width = wireType == 1 ? 8 : 4
                guard end - index >= width else {
                    throw Failure(
                        code: .malformed, detail: "needs \(width) bytes, \(end - index) left", reversedPath: [name(field, number)]
                    )
                }
                index += width
            case 2:
                guard let length = readVarint(bytes, &index, end) else {
                    throw Failure(code: .malformed, detail: "truncated length prefix", reversedPath: [name(field, number)])
                }
                guard length <= UInt64(end - index) else {
                    throw Failure(
                        code: .malformed, detail: "length \(length) exceeds the \(end - index) bytes left",
                        reversedPath: [name(field, number)]
                    )
                }
                let bodyStart = index
                index += Int(length)
                guard let field else { continue }
                switch field.kind {
                case .string:
                    if let problem = UTF8Check.firstProblem(bytes, from: bodyStart, to: index) {
                        throw Failure(
                            code: problem.isNUL ? .embeddedNUL : .invalidUTF8,
                            detail: problem.isNUL
                                ? "embedded NUL at byte \(problem.offset) of \(index - bodyStart)"
                                : "invalid UTF-8 at byte \(problem.offset) of \(index - bodyStart)",
                            reversedPath: [field.name]
                        )
                    }
                case .message(let nested):
                    do {
                        try walk(bytes, from: bodyStart, to: index, schema: nested, depth: depth + 1)
                    } catch {
                        var failure = error
                        failure.reversedPath.append(field.name)
                        throw failure
                    }
                default:
                    break
                }
            default:
                throw Failure(
                    code: .malformed, detail: "unsupported wire type \(wireType) at byte \(tagOffset)",
                    reversedPath: [name(field, number)]
                )
            }
        }
    }

    /// A field's name for an error; built only when one is thrown, since the walk runs on every request.
    private static func name(_ field: WireSchema.Field?, _ number: UInt32) -> String {
        field?.name ?? "<field \(number)>"
    }

    /// Reads a base-128 varint of at most 10 bytes ending before `end`; nil when it does not.
    @inline(__always)
    private static func readVarint(_ bytes: UnsafeRawBufferPointer, _ index: inout Int, _ end: Int) -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var position = index
        while position < end, shift < 70 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                index = position
                return value
            }
            shift += 7
        }
        return nil
    }
}
