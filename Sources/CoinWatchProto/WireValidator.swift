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
        do {
            try walk(bytes, from: 0, to: bytes.count, schema.shapes.view, depth: 0)
        } catch {
            throw error.decodingError(root: schema)
        }
    }

    /// The error for input protobuf-c refused: the walk's finding when it has one, else a generic one.
    static func explainRejection(_ bytes: UnsafeRawBufferPointer, schema: WireSchema) -> WireDecodingError {
        do {
            try walk(bytes, from: 0, to: bytes.count, schema.shapes.view, depth: 0)
        } catch {
            return error.decodingError(root: schema)
        }
        return WireDecodingError(
            code: .malformed, typeName: schema.name,
            message: "\(schema.name): not a valid encoding (rejected by protobuf-c)"
        )
    }

    /// What the walk found, with the path of field numbers from the innermost field outwards. Names are looked up
    /// in the schemas only when the error is built: the walk itself reads plain memory.
    struct Failure: Error {
        var code: WireDecodingError.Code
        var detail: String
        var reversedPath: [UInt32] = []

        func decodingError(root: WireSchema) -> WireDecodingError {
            var names: [String] = []
            var schema: WireSchema? = root
            for number in reversedPath.reversed() {
                let field = schema?.field(number)
                names.append(field?.name ?? "<field \(number)>")
                if case .message(let nested)? = field?.kind { schema = nested } else { schema = nil }
            }
            let path = names.isEmpty ? nil : names.joined(separator: ".")
            let subject = path.map { "\(root.name).\($0)" } ?? root.name
            return WireDecodingError(code: code, typeName: root.name, fieldPath: path, message: "\(subject): \(detail)")
        }
    }

    /// Walks `bytes[start..<end]` as a message of `shapes`, nested messages too; throws what it finds first.
    static func walk(
        _ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int, _ shapes: WireSchema.Shapes, depth: Int
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
            let shape = shapes.shape(number)
            if let expected = shape.wireType, expected != wireType {
                throw Failure(
                    code: .malformed, detail: "wire type \(wireType) where \(expected) is expected", reversedPath: [number])
            }
            switch wireType {
            case 0:
                guard readVarint(bytes, &index, end) != nil else {
                    throw Failure(code: .malformed, detail: "truncated or overlong varint", reversedPath: [number])
                }
            case 1, 5:
                let width = wireType == 1 ? 8 : 4
                guard end - index >= width else {
                    throw Failure(code: .malformed, detail: "needs \(width) bytes, \(end - index) left", reversedPath: [number])
                }
                index += width
            case 2:
                guard let length = readVarint(bytes, &index, end) else {
                    throw Failure(code: .malformed, detail: "truncated length prefix", reversedPath: [number])
                }
                guard length <= UInt64(end - index) else {
                    throw Failure(
                        code: .malformed, detail: "length \(length) exceeds the \(end - index) bytes left",
                        reversedPath: [number])
                }
                let bodyStart = index
                index += Int(length)
                if let nested = shape.nested {
                    do {
                        try walk(bytes, from: bodyStart, to: index, nested, depth: depth + 1)
                    } catch {
                        var failure = error
                        failure.reversedPath.append(number)
                        throw failure
                    }
                } else if shape.isString, let problem = UTF8Check.firstProblem(bytes, from: bodyStart, to: index) {
                    throw Failure(
                        code: problem.isNUL ? .embeddedNUL : .invalidUTF8,
                        detail: problem.isNUL
                            ? "embedded NUL at byte \(problem.offset) of \(index - bodyStart)"
                            : "invalid UTF-8 at byte \(problem.offset) of \(index - bodyStart)",
                        reversedPath: [number])
                }
            default:
                throw Failure(
                    code: .malformed, detail: "unsupported wire type \(wireType) at byte \(tagOffset)", reversedPath: [number])
            }
        }
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
