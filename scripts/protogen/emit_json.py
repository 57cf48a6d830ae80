"""Swift emitter of the proto3 JSON mapping for the CoinWatch message layer.

One file: a JSONMessage conformance per message (decoder and canonical encoder) and a JSONEnum conformance per
enum, driven by the same schema model as the binary layer, so a field added to proto/ is in both at once.
"""

from model import Oneof, GeneratorError


def check_json_names(schema):
    """Every name a field answers to in JSON must be unique in its message and need no escaping."""
    for m in schema.messages:
        owners = {}
        for f in m.fields:
            for name in {f.json_name, f.proto_name}:
                if not name or not all(c.isalnum() or c == "_" for c in name) or not name.isascii():
                    raise GeneratorError(f"{m.full_name}.{f.proto_name}: JSON name {name!r} is not an identifier")
                if owners.get(name, f) is not f:
                    raise GeneratorError(f"{m.full_name}: JSON name {name!r} is used by two fields")
                owners[name] = f
        if len(m.fields) + len(m.oneofs) > 64:
            raise GeneratorError(f"{m.full_name}: more than 64 fields and oneofs (the JSON decoder's seen set)")


def read_expr(f, value):
    """Swift expression reading JSON `value` for field kind of f; nil for null."""
    if f.kind == "scalar":
        return f"JSONRead.integer({value}, as: {f.swift_type}.self)"
    if f.kind == "bool":
        return f"JSONRead.bool({value})"
    if f.kind == "string":
        return f"JSONRead.string({value})"
    if f.kind == "bytes":
        return f"JSONRead.bytes({value})"
    if f.kind == "enum":
        return f"JSONRead.enumValue({value}, {f.swift_type}.self, options: options)"
    raise AssertionError(f.kind)


def element_expr(f, value):
    """Swift expression reading a list element or map value (null refused)."""
    if f.kind == "message":
        return f"{f.swift_type}(jsonValue: {value}, options: options)"
    return f"JSONRead.present({read_expr(f, value)}, {value})"


def write_stmt(f, value):
    if f.kind == "scalar":
        return f"writer.quotedNumber({value})" if f.is_64_bit else f"writer.number({value})"
    return {
        "bool": f"writer.bool({value})",
        "string": f"writer.string({value})",
        "bytes": f"writer.base64({value})",
        "enum": f"writer.enumValue({value})",
        "message": f"{value}.writeJSON(to: &writer)",
    }[f.kind]


def non_default(f, value):
    if f.kind == "scalar":
        return f"{value} != 0"
    if f.kind == "bool":
        return value
    if f.kind in ("string", "bytes"):
        return f"!{value}.isEmpty"
    if f.kind == "enum":
        return f"{value}.rawValue != 0"
    raise AssertionError(f.kind)


def names_of(f):
    names = [f.json_name] + ([f.proto_name] if f.proto_name != f.json_name else [])
    return ", ".join(f'"{n}"' for n in names)


def emit_decode_case(w, f, slot, oneof_slot=None):
    name = f.swift_name
    w(f"case {names_of(f)}:")
    w.indent()
    w("do throws(JSONDecodingError) {")
    w.indent()
    w(f'try seen.insert({slot}, "{f.json_name}")')
    if f.shape == "oneof":
        one = f.oneof
        case = f.case_name.strip("`")
        if f.kind == "message":
            w("if member.value != .null {")
            w(f'    try seen.insert({oneof_slot}, "the oneof {one.proto_name}")')
            w(f"    self.{one.swift_name} = .{case}(try {f.swift_type}(jsonValue: member.value, options: options))")
            w("}")
        else:
            w(f"if let value = try {read_expr(f, 'member.value')} {{")
            w(f'    try seen.insert({oneof_slot}, "the oneof {one.proto_name}")')
            w(f"    self.{one.swift_name} = .{case}(value)")
            w("}")
    elif f.shape == "singular":
        w(f"if let value = try {read_expr(f, 'member.value')} {{ self.{name} = value }}")
    elif f.shape == "optional_message":
        w("if member.value != .null {")
        w(f"    self.{name} = try {f.swift_type}(jsonValue: member.value, options: options)")
        w("}")
    elif f.shape == "repeated":
        w("if let elements = try JSONRead.elements(member.value) {")
        w.indent()
        w(f"self.{name}.reserveCapacity(elements.count)")
        w("for (index, element) in elements.enumerated() {")
        w(f"    do throws(JSONDecodingError) {{ self.{name}.append(try {element_expr(f, 'element')}) }} catch {{ throw error.inElement(index) }}")
        w("}")
        w.dedent()
        w("}")
    elif f.shape == "map":
        v = f.value_field
        w("if let entries = try JSONRead.entries(member.value) {")
        w.indent()
        w(f"self.{name}.reserveCapacity(entries.count)")
        w("for entry in entries {")
        w.indent()
        w("do throws(JSONDecodingError) {")
        w.indent()
        w("let key = try JSONRead.checkedString(entry.key)")
        w(f"guard self.{name}[key] == nil else {{ throw JSONRead.duplicateKey() }}")
        w(f"self.{name}[key] = try {element_expr(v, 'entry.value')}")
        w.dedent()
        w("} catch {")
        w("    throw error.inEntry(entry.key)")
        w("}")
        w.dedent()
        w("}")
        w.dedent()
        w("}")
    else:
        raise AssertionError(f.shape)
    w.dedent()
    w("} catch {")
    w(f'    throw error.inField("{f.json_name}")')
    w("}")
    w.dedent()


def emit_encode_field(w, f):
    name = f.swift_name
    if f.shape == "singular":
        w(f"if {non_default(f, name)} {{")
        w(f'    writer.key("{f.json_name}")')
        w(f"    {write_stmt(f, name)}")
        w("}")
    elif f.shape == "optional_message":
        w(f"if let {name} {{")
        w(f'    writer.key("{f.json_name}")')
        w(f"    {write_stmt(f, name)}")
        w("}")
    elif f.shape == "repeated":
        w(f"if !{name}.isEmpty {{")
        w(f'    writer.key("{f.json_name}")')
        w("    writer.beginArray()")
        w(f"    for element in {name} {{ {write_stmt(f, 'element')} }}")
        w("    writer.endArray()")
        w("}")
    elif f.shape == "map":
        w(f"if !{name}.isEmpty {{")
        w(f'    writer.key("{f.json_name}")')
        w("    writer.beginObject()")
        w(f"    for (key, value) in sortedEntries({name}) {{")
        w("        writer.key(key)")
        w(f"        {write_stmt(f.value_field, 'value')}")
        w("    }")
        w("    writer.endObject()")
        w("}")
    else:
        raise AssertionError(f.shape)


def emit_message(w, m):
    w(f"extension {m.swift_name}: JSONMessage {{")
    w.indent()
    w("public init(jsonValue: JSONValue, options: JSONDecodingOptions) throws(JSONDecodingError) {")
    w.indent()
    w("self.init()")
    fields = m.fields
    if fields:
        w("var seen = JSONSeenFields()")
    w("for member in try JSONRead.members(jsonValue) {")
    w.indent()
    w("switch member.key {")
    oneof_slots = {one.proto_name: len(fields) + i for i, one in enumerate(m.oneofs)}
    for slot, f in enumerate(fields):
        emit_decode_case(w, f, slot, oneof_slots.get(f.oneof.proto_name) if f.shape == "oneof" else None)
    w("default:")
    w("    guard options.ignoreUnknownFields else { throw JSONRead.unknownField(member.key, in: Self.protoName) }")
    w("}")
    w.dedent()
    w("}")
    w.dedent()
    w("}")
    w()
    w("public func writeJSON(to writer: inout JSONWriter) {")
    w.indent()
    w("writer.beginObject()")
    for member in m.members:
        if isinstance(member, Oneof):
            w(f"switch {member.swift_name} {{")
            for f in member.fields:
                w(f"case .{f.case_name.strip('`')}(let value)?:")
                w(f'    writer.key("{f.json_name}")')
                w(f"    {write_stmt(f, 'value')}")
            w("case nil:")
            w("    break")
            w("}")
        else:
            emit_encode_field(w, member)
    w("writer.endObject()")
    w.dedent()
    w("}")
    w.dedent()
    w("}")


def emit_enum(w, e):
    w(f"extension {e.swift_name}: JSONEnum {{")
    w.indent()
    w("public static func named(_ name: String) -> Self? {")
    w.indent()
    w("switch name {")
    for v in e.values:
        w(f'case "{v.proto_name}": Self(rawValue: {v.number})')
    w("default: nil")
    w("}")
    w.dedent()
    w("}")
    w()
    w("public var protoValueName: StaticString? {")
    w.indent()
    w("switch rawValue {")
    for v in e.values:
        w(f'case {v.number}: "{v.proto_name}"')
    w("default: nil")
    w("}")
    w.dedent()
    w("}")
    w.dedent()
    w("}")


def emit_json_file(schema, writer_class, header):
    check_json_names(schema)
    w = writer_class()
    header(w, "proto/" + schema.package.replace(".", "/") + "/*.proto",
           ["The proto3 JSON mapping of every message and enum (see JSONMessage for the rules)."])
    for e in schema.enums:
        w()
        w(f"// MARK: - {e.full_name}")
        w()
        emit_enum(w, e)
    for m in schema.messages:
        w()
        w(f"// MARK: - {m.full_name}")
        w()
        emit_message(w, m)
    w()
    w("// MARK: - Methods")
    w()
    w(f"extension {schema.namespace} {{")
    w.indent()
    w("/// Every method of every service with its JSON transcoding, for transports that carry JSON (Connect).")
    w("public static let jsonMethodCodecs: [JSONMethodCodec] = [")
    for f in schema.files:
        for s in f.services:
            for meth in s.methods:
                w(f"    JSONMethodCodec({schema.namespace}.{s.swift_name}.{meth.swift_name}),")
    w("]")
    w.dedent()
    w("}")
    return w.text()
