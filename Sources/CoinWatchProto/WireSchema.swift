/// The field table of one message, as WireValidator and WireJSON need it: numbers, names, wire shapes and how
/// each field is written in the proto3 JSON mapping.
///
/// Generated (`WireSchemas`) from the same descriptors protoc-c compiles, so it agrees with protobuf-c's own
/// tables. A class so tables can refer to each other without copying; immutable, hence Sendable.
final class WireSchema: Sendable {
    /// What a field holds on the wire.
    enum Kind: Sendable {
        case varint
        case fixed32
        case fixed64
        case bytes
        /// Length-delimited, checked for UTF-8 and NUL.
        case string
        /// Length-delimited, walked with the given table.
        case message(WireSchema)

        /// The wire type a well-formed encoding uses for the field.
        var wireType: UInt64 {
            switch self {
            case .varint: 0
            case .fixed64: 1
            case .bytes, .string, .message: 2
            case .fixed32: 5
            }
        }
    }

    /// A class, so a walk that looks a field up holds one reference rather than copying (and retaining) the
    /// name, the nested table and the enum's names one by one.
    final class Field: Sendable {
        let number: UInt32
        let name: String
        let kind: Kind
        /// How the field appears in JSON (`WireSchema+JSON.swift`).
        let json: JSONField

        init(number: UInt32, name: String, kind: Kind, json: JSONField) {
            self.number = number
            self.name = name
            self.kind = kind
            self.json = json
        }
    }

    /// The fully qualified message name.
    let name: String
    let fields: [Field]
    /// `fields` index by field number, for schemas whose numbers are small (all of ours); else empty.
    private let slots: [Int8]
    /// The fields as `WireValidator`'s walk over valid input reads them; nil when `slots` is empty here or in a
    /// message this one holds.
    let shapes: ShapeTable?

    init(name: String, fields: [Field]) {
        self.name = name
        self.fields = fields.sorted { $0.number < $1.number }
        let maxNumber = fields.map(\.number).max() ?? 0
        if maxNumber < 128, fields.count < 128 {
            var slots = [Int8](repeating: -1, count: Int(maxNumber) + 1)
            for (index, field) in self.fields.enumerated() {
                slots[Int(field.number)] = Int8(index)
            }
            self.slots = slots
            self.shapes = ShapeTable(self.fields, count: Int(maxNumber) + 1)
        } else {
            self.slots = []
            self.shapes = nil
        }
    }

    /// One field number's wire shape, and the shapes of the message it holds, in plain memory.
    struct Shape {
        /// The wire type a well-formed encoding uses (`Kind.wireType`); nil for a number the schema does not know.
        var wireType: UInt64?
        /// A string field: its bytes are checked for UTF-8 and NUL.
        var isString: Bool
        /// A message field's own shapes; nil for any other field.
        var nested: UnsafeBufferPointer<Shape>?
    }

    /// Every field number's `Shape`, up to the largest. Looking a `Field` up retains it, and reading its `Kind` the
    /// nested table: on a request's every field that was most of the walk's time (a profile of durable saves put the
    /// walk's reference counting at 4% of the event loop's samples). Allocated once per schema, never changed, freed
    /// with it; nested tables are their schemas', which a `Kind.message` keeps alive as long as this one.
    final class ShapeTable: @unchecked Sendable {
        // @unchecked Sendable: written only in init, read-only after.
        let shapes: UnsafeMutableBufferPointer<Shape>

        init?(_ fields: [Field], count: Int) {
            var nestedTables: [Int: UnsafeBufferPointer<Shape>] = [:]
            for field in fields {
                guard case .message(let nested) = field.kind else { continue }
                guard let table = nested.shapes else { return nil }
                nestedTables[Int(field.number)] = UnsafeBufferPointer(table.shapes)
            }
            shapes = .allocate(capacity: count)
            shapes.initialize(repeating: Shape(wireType: nil, isString: false, nested: nil))
            for field in fields {
                var isString = false
                if case .string = field.kind { isString = true }
                shapes[Int(field.number)] = Shape(
                    wireType: field.kind.wireType, isString: isString, nested: nestedTables[Int(field.number)])
            }
        }

        deinit {
            shapes.deallocate()
        }
    }

    /// The field with this number, or nil for an unknown field.
    @inline(__always)
    func field(_ number: UInt32) -> Field? {
        if !slots.isEmpty {
            guard number < slots.count else { return nil }
            let index = Int(slots[Int(number)])
            return index >= 0 ? fields[index] : nil
        }
        var low = 0
        var high = fields.count
        while low < high {
            let mid = (low + high) / 2
            if fields[mid].number < number {
                low = mid + 1
            } else {
                high = mid
            }
        }
        return low < fields.count && fields[low].number == number ? fields[low] : nil
    }
}
