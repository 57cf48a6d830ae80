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
    /// The fields as `WireValidator` walks them.
    let shapes: ShapeTable

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
        } else {
            self.slots = []
        }
        self.shapes = ShapeTable(self.fields)
    }

    /// One field number's wire shape, and the shapes of the message it holds, in plain memory.
    struct Shape {
        /// The wire type a well-formed encoding uses (`Kind.wireType`); nil for a number the schema does not know.
        var wireType: UInt64?
        /// A string field: its bytes are checked for UTF-8 and NUL.
        var isString: Bool
        /// A message field's own shapes; nil for any other field.
        var nested: Shapes?

        static var unknown: Shape { Shape(wireType: nil, isString: false, nested: nil) }
    }

    /// A field number above `Shapes.directCount`, with its shape.
    struct NumberedShape {
        var number: UInt32
        var shape: Shape
    }

    /// A schema's shapes as the walk reads them: two views of its `ShapeTable`'s memory, taking no references.
    struct Shapes {
        /// Numbers below this are looked up by index; larger ones (none of ours) by binary search.
        static let directCount = 128

        /// Index = field number, up to the schema's largest below `directCount`.
        let direct: UnsafeBufferPointer<Shape>
        /// Numbers of `directCount` and above, ascending.
        let overflow: UnsafeBufferPointer<NumberedShape>

        /// The shape of field `number`; `Shape.unknown` for a number the schema does not have.
        @inline(__always)
        func shape(_ number: UInt32) -> Shape {
            if number < direct.count { return direct[Int(number)] }
            let index = WireSchema.firstIndex(notBelow: number, count: overflow.count) { overflow[$0].number }
            return index < overflow.count && overflow[index].number == number ? overflow[index].shape : .unknown
        }
    }

    /// Every field number's `Shape`. Looking a `Field` up retains it, and reading its `Kind` the nested table: on a
    /// request's every field that was most of the walk's time (a profile of durable saves put the walk's reference
    /// counting at 4% of the event loop's samples). Allocated once per schema, never changed, freed with it; nested
    /// shapes are their schemas', which a `Kind.message` keeps alive as long as this one.
    final class ShapeTable: @unchecked Sendable {
        // @unchecked Sendable: written only in init, read-only after.
        private let direct: UnsafeMutableBufferPointer<Shape>
        private let overflow: UnsafeMutableBufferPointer<NumberedShape>

        /// `fields` in ascending number order.
        init(_ fields: [Field]) {
            func shape(_ field: Field) -> Shape {
                switch field.kind {
                case .string: Shape(wireType: field.kind.wireType, isString: true, nested: nil)
                case .message(let nested): Shape(wireType: field.kind.wireType, isString: false, nested: nested.shapes.view)
                default: Shape(wireType: field.kind.wireType, isString: false, nested: nil)
                }
            }
            let small = fields.filter { $0.number < Shapes.directCount }
            let large = fields.filter { $0.number >= Shapes.directCount }
            direct = .allocate(capacity: Int(small.last?.number ?? 0) + 1)
            direct.initialize(repeating: .unknown)
            for field in small {
                direct[Int(field.number)] = shape(field)
            }
            overflow = .allocate(capacity: large.count)
            _ = overflow.initialize(from: large.map { NumberedShape(number: $0.number, shape: shape($0)) })
        }

        /// The shapes as the walk reads them; valid while this table lives.
        var view: Shapes {
            Shapes(direct: UnsafeBufferPointer(direct), overflow: UnsafeBufferPointer(overflow))
        }

        deinit {
            direct.deallocate()
            overflow.deallocate()
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
        let index = Self.firstIndex(notBelow: number, count: fields.count) { fields[$0].number }
        return index < fields.count && fields[index].number == number ? fields[index] : nil
    }

    /// The index of the first of `count` ascending field numbers (`numberAt(index)`) that is not below `number`;
    /// `count` when there is none.
    @inline(__always)
    static func firstIndex(notBelow number: UInt32, count: Int, _ numberAt: (Int) -> UInt32) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if numberAt(mid) < number {
                low = mid + 1
            } else {
                high = mid
            }
        }
        return low
    }
}
