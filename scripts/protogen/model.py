"""Schema model for the CoinWatch Swift generator.

Reads a FileDescriptorSet (made by `protoc --include_source_info`) into a small
model of what the Swift layer supports, and refuses everything else with a
GeneratorError naming the construct, so the Swift and C layers never disagree
silently about a schema feature.
"""

from google.protobuf import descriptor_pb2 as d

F = d.FieldDescriptorProto


class GeneratorError(Exception):
    """A schema construct the generator does not support, or a naming clash."""


SWIFT_KEYWORDS = {
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
    "inout", "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public",
    "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue",
    "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return",
    "throw", "switch", "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self",
    "super", "throws", "true", "try", "Type", "Protocol", "some", "any",
}

# Names the generated code itself uses as members of every message.
RESERVED_MEMBER_NAMES = {"protoName", "serializedBytes", "serialize", "cMessage", "fill", "description",
                         "hashValue", "hash", "random"}

C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "_Bool", "bool",
}

# Word-initialisms written in capitals inside camel-case names (Swift API guidelines).
INITIALISMS = {"id": "ID", "url": "URL", "uuid": "UUID", "json": "JSON", "http": "HTTP", "https": "HTTPS"}

# Proto scalar type -> (Swift type, wire kind, Swift default literal, C conversion style).
SCALARS = {
    F.TYPE_INT32: ("Int32", "varint", "0", "plain"),
    F.TYPE_SINT32: ("Int32", "varint", "0", "plain"),
    F.TYPE_SFIXED32: ("Int32", "fixed32", "0", "plain"),
    F.TYPE_INT64: ("Int64", "varint", "0", "plain"),
    F.TYPE_SINT64: ("Int64", "varint", "0", "plain"),
    F.TYPE_SFIXED64: ("Int64", "fixed64", "0", "plain"),
    F.TYPE_UINT32: ("UInt32", "varint", "0", "plain"),
    F.TYPE_FIXED32: ("UInt32", "fixed32", "0", "plain"),
    F.TYPE_UINT64: ("UInt64", "varint", "0", "plain"),
    F.TYPE_FIXED64: ("UInt64", "fixed64", "0", "plain"),
    F.TYPE_BOOL: ("Bool", "varint", "false", "bool"),
    F.TYPE_STRING: ("String", "string", '""', "string"),
    F.TYPE_BYTES: ("[UInt8]", "bytes", "[]", "bytes"),
}

TYPE_NAMES = {v: k for k, v in F.Type.items()}

# Proto type -> the case of WireSchema.JSONForm saying how a value on the wire is written in JSON (enums and
# messages get theirs in build_field).
JSON_FORMS = {
    F.TYPE_INT32: "int32", F.TYPE_SINT32: "sint32", F.TYPE_SFIXED32: "sfixed32",
    F.TYPE_INT64: "int64", F.TYPE_SINT64: "sint64", F.TYPE_SFIXED64: "sfixed64",
    F.TYPE_UINT32: "uint32", F.TYPE_FIXED32: "fixed32", F.TYPE_UINT64: "uint64", F.TYPE_FIXED64: "fixed64",
    F.TYPE_BOOL: "bool", F.TYPE_STRING: "string", F.TYPE_BYTES: "bytes",
}


def camel_words(name):
    return [w for w in name.split("_") if w]


def lower_camel(name):
    words = camel_words(name.lower() if name.isupper() else name)
    if not words:
        raise GeneratorError(f"cannot form a Swift name from {name!r}")
    out = words[0][0].lower() + words[0][1:]
    for w in words[1:]:
        out += INITIALISMS.get(w.lower(), w[0].upper() + w[1:])
    return out


def upper_camel(name):
    out = "".join(INITIALISMS.get(w.lower(), w[0].upper() + w[1:]) for w in camel_words(name))
    if not out:
        raise GeneratorError(f"cannot form a Swift type name from {name!r}")
    return out


def upper_snake(camel):
    out = ""
    for i, ch in enumerate(camel):
        if ch.isupper() and i > 0 and not camel[i - 1].isupper():
            out += "_"
        out += ch.upper()
    return out


def c_camel_to_lower(name):
    """protoc-c's CamelToLower: '_' before an upper-case letter that follows a non-upper one."""
    out, was_upper = "", True
    for ch in name:
        is_upper = ch.isupper()
        if is_upper:
            if not was_upper:
                out += "_"
            out += ch.lower()
        else:
            out += ch
        was_upper = is_upper
    return out


def c_to_camel(name):
    """protoc-c's ToCamel for package components: 'foo_bar' -> 'FooBar'."""
    out, cap = "", True
    for ch in name:
        if ch == "_":
            cap = True
        elif cap:
            out += ch.upper()
            cap = False
        else:
            out += ch
    return out


def swift_ident(name):
    return f"`{name}`" if name in SWIFT_KEYWORDS else name


class Comments:
    """Leading (else trailing) comments by source path."""

    def __init__(self, file_proto):
        self.by_path = {}
        for loc in file_proto.source_code_info.location:
            text = loc.leading_comments or loc.trailing_comments
            if text.strip():
                self.by_path[tuple(loc.path)] = text

    def get(self, *path):
        return self.by_path.get(tuple(path))


class EnumValue:
    def __init__(self, proto_name, swift_name, number, doc):
        self.proto_name, self.swift_name, self.number, self.doc = proto_name, swift_name, number, doc


class Enum:
    def __init__(self, full_name, swift_name, c_type, values, doc):
        self.full_name, self.swift_name, self.c_type, self.values, self.doc = (
            full_name, swift_name, c_type, values, doc)


class Field:
    """One field of a message.

    shape: 'singular' | 'optional_message' | 'repeated' | 'map' | 'oneof'
    kind:  'scalar' | 'string' | 'bytes' | 'bool' | 'enum' | 'message'
    """

    def __init__(self, **kw):
        self.__dict__.update(kw)


class Oneof:
    def __init__(self, proto_name, swift_name, type_name, c_case, fields, doc):
        self.proto_name, self.swift_name, self.type_name, self.c_case, self.fields, self.doc = (
            proto_name, swift_name, type_name, c_case, fields, doc)


class Message:
    def __init__(self, full_name, swift_name, c_type, c_prefix, doc):
        self.full_name, self.swift_name, self.c_type, self.c_prefix, self.doc = (
            full_name, swift_name, c_type, c_prefix, doc)
        self.members = []   # Field (non-oneof) and Oneof, in declaration order
        self.enums = []
        self.map_entries = {}  # full name -> MapEntry

    @property
    def fields(self):
        out = []
        for m in self.members:
            out.extend(m.fields if isinstance(m, Oneof) else [m])
        return out

    @property
    def oneofs(self):
        return [m for m in self.members if isinstance(m, Oneof)]


class MapEntry:
    def __init__(self, full_name, c_type, c_prefix, key, value):
        self.full_name, self.c_type, self.c_prefix, self.key, self.value = (
            full_name, c_type, c_prefix, key, value)


class Method:
    def __init__(self, proto_name, swift_name, full_path, input_type, output_type, client_streaming,
                 server_streaming, doc, has_no_side_effects):
        self.__dict__.update(locals())
        del self.__dict__["self"]


class Service:
    def __init__(self, full_name, swift_name, methods, doc):
        self.full_name, self.swift_name, self.methods, self.doc = full_name, swift_name, methods, doc


class ProtoFile:
    def __init__(self, name, package):
        self.name, self.package = name, package
        self.messages, self.enums, self.services = [], [], []


class Schema:
    """Everything generated from one package."""

    def __init__(self, files, namespace, package):
        self.files, self.namespace, self.package = files, namespace, package

    @property
    def messages(self):
        return [m for f in self.files for m in f.messages]

    @property
    def enums(self):
        out = []
        for f in self.files:
            out.extend(f.enums)
            for m in f.messages:
                out.extend(m.enums)
        return out


def load_schema(descriptor_set_bytes):
    fds = d.FileDescriptorSet()
    fds.ParseFromString(descriptor_set_bytes)
    if not fds.file:
        raise GeneratorError("the descriptor set holds no files")
    packages = {f.package for f in fds.file}
    if len(packages) != 1:
        raise GeneratorError(f"all files must share one package, found {sorted(packages)}")
    package = packages.pop()
    parts = package.split(".")
    if not package or not all(p.isidentifier() for p in parts):
        raise GeneratorError(f"unsupported package name {package!r}")
    namespace = upper_camel(parts[-1])
    c_package_type = "__".join(c_to_camel(p) for p in parts)
    c_package_lower = "__".join(c_camel_to_lower(p) for p in parts)

    # Pass 1: register every type so references resolve regardless of order.
    types = {}  # ".pkg.Name" -> ("message"|"enum"|"map", swift name, c type, c prefix, descriptor)
    for fp in fds.file:
        if fp.syntax != "proto3":
            raise GeneratorError(f"{fp.name}: only proto3 is supported (syntax {fp.syntax or 'proto2'!r})")
        if fp.dependency:
            raise GeneratorError(f"{fp.name}: imports are not supported ({list(fp.dependency)})")
        if fp.extension:
            raise GeneratorError(f"{fp.name}: extensions are not supported")
        for md in fp.message_type:
            full = f".{package}.{md.name}"
            types[full] = ("message", f"{namespace}.{md.name}", f"{c_package_type}__{md.name}",
                           f"{c_package_lower}__{c_camel_to_lower(md.name)}", md)
            for nd in md.nested_type:
                nfull = f"{full}.{nd.name}"
                if not nd.options.map_entry:
                    raise GeneratorError(f"{nfull[1:]}: nested messages are not supported (declare them at "
                                         "top level; protoc-c emits no pack/unpack functions for them)")
                types[nfull] = ("map", None, f"{c_package_type}__{md.name}__{nd.name}",
                                f"{c_package_lower}__{c_camel_to_lower(md.name)}__{c_camel_to_lower(nd.name)}",
                                nd)
            for ed in md.enum_type:
                types[f"{full}.{ed.name}"] = ("enum", f"{namespace}.{md.name}.{ed.name}",
                                              f"{c_package_type}__{md.name}__{ed.name}", None, ed)
        for ed in fp.enum_type:
            types[f".{package}.{ed.name}"] = ("enum", f"{namespace}.{ed.name}",
                                             f"{c_package_type}__{ed.name}", None, ed)

    files = []
    for fp in fds.file:
        comments = Comments(fp)
        pf = ProtoFile(fp.name, package)
        for ei, ed in enumerate(fp.enum_type):
            pf.enums.append(build_enum(f"{package}.{ed.name}", types[f".{package}.{ed.name}"], ed,
                                       comments, (5, ei)))
        for mi, md in enumerate(fp.message_type):
            pf.messages.append(build_message(package, md, types, comments, (4, mi)))
        for si, sd in enumerate(fp.service):
            pf.services.append(build_service(package, sd, types, comments, (6, si)))
        files.append(pf)

    schema = Schema(files, namespace, package)
    check_names(schema)
    check_acyclic(schema)
    return schema


def build_enum(full_name, entry, ed, comments, path):
    _, swift_name, c_type, _, _ = entry
    if ed.options.allow_alias:
        raise GeneratorError(f"{full_name}: enum aliases (allow_alias) are not supported")
    if not ed.value or ed.value[0].number != 0:
        raise GeneratorError(f"{full_name}: the first value must be 0 (proto3)")
    prefix = upper_snake(ed.name) + "_"
    strip = all(v.name.startswith(prefix) and len(v.name) > len(prefix) and not v.name[len(prefix)].isdigit()
                for v in ed.value)
    values, seen_names, seen_numbers = [], set(), set()
    for vi, vd in enumerate(ed.value):
        base = vd.name[len(prefix):] if strip else vd.name
        swift = swift_ident(lower_camel(base.lower()))
        if swift in seen_names:
            raise GeneratorError(f"{full_name}: values {vd.name} clash as Swift name {swift!r}")
        if vd.number in seen_numbers:
            raise GeneratorError(f"{full_name}: duplicate number {vd.number}")
        if swift.strip("`") in ("rawValue", "description", "knownValues", "init"):
            raise GeneratorError(f"{full_name}.{vd.name}: Swift name {swift!r} clashes with a generated member")
        seen_names.add(swift)
        seen_numbers.add(vd.number)
        values.append(EnumValue(vd.name, swift, vd.number, comments.get(*path, 2, vi)))
    return Enum(full_name, swift_name, c_type, values, comments.get(*path))


def build_message(package, md, types, comments, path):
    full = f"{package}.{md.name}"
    _, swift_name, c_type, c_prefix, _ = types["." + full]
    if md.extension_range or md.extension:
        raise GeneratorError(f"{full}: extensions are not supported")
    msg = Message(full, swift_name, c_type, c_prefix, comments.get(*path))
    for ei, ed in enumerate(md.enum_type):
        msg.enums.append(build_enum(f"{full}.{ed.name}", types[f".{full}.{ed.name}"], ed, comments,
                                    path + (4, ei)))
    oneofs = {}
    for oi, od in enumerate(md.oneof_decl):
        tname = upper_camel(od.name)
        oneofs[oi] = Oneof(od.name, swift_ident(lower_camel(od.name)), tname, od.name + "_case", [],
                           comments.get(*path, 8, oi))
    placed = set()
    for fi, fd in enumerate(md.field):
        where = f"{full}.{fd.name}"
        if fd.proto3_optional:
            raise GeneratorError(f"{where}: proto3 'optional' is not supported")
        if fd.type == F.TYPE_GROUP:
            raise GeneratorError(f"{where}: groups are not supported")
        if fd.type in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
            raise GeneratorError(f"{where}: float/double fields are not supported (use an exact type)")
        if fd.label == F.LABEL_REQUIRED:
            raise GeneratorError(f"{where}: required fields are not supported")
        if fd.HasField("default_value"):
            raise GeneratorError(f"{where}: explicit defaults are not supported")
        if fd.name in C_KEYWORDS:
            raise GeneratorError(f"{where}: a field named after a C keyword is not supported")
        field = build_field(full, fd, types, comments.get(*path, 2, fi))
        if fd.HasField("oneof_index"):
            if field.shape in ("repeated", "map"):
                raise GeneratorError(f"{where}: repeated field inside a oneof")
            field.shape = "oneof"
            one = oneofs[fd.oneof_index]
            field.oneof = one
            field.case_name = field.swift_name
            one.fields.append(field)
            if fd.oneof_index not in placed:
                placed.add(fd.oneof_index)
                msg.members.append(one)
        else:
            msg.members.append(field)
    for nd in md.nested_type:
        nfull = f"{full}.{nd.name}"
        _, _, nc_type, nc_prefix, _ = types["." + nfull]
        key = build_field(nfull, nd.field[0], types, None)
        value = build_field(nfull, nd.field[1], types, None)
        msg.map_entries[nfull] = MapEntry(nfull, nc_type, nc_prefix, key, value)
    for f in msg.fields:
        if f.shape == "map":
            f.entry = msg.map_entries[f.type_name[1:]]
            if f.entry.key.kind != "string":
                raise GeneratorError(f"{full}.{f.proto_name}: only string map keys are supported")
            f.value_field = f.entry.value
    return msg


def json_name(fd):
    """The field's proto3 JSON name: protoc's json_name (lowerCamelCase of the field name) when set."""
    if fd.HasField("json_name"):
        return fd.json_name
    words = fd.name.split("_")
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])


def build_field(owner, fd, types, doc):
    where = f"{owner}.{fd.name}"
    swift_name = swift_ident(lower_camel(fd.name))
    f = Field(proto_name=fd.name, swift_name=swift_name, number=fd.number, doc=doc, c_name=fd.name,
              type_name=fd.type_name, owner=owner, json_name=json_name(fd),
              is_64_bit=fd.type in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64, F.TYPE_UINT64, F.TYPE_FIXED64))
    if fd.type in SCALARS:
        f.swift_type, f.wire, f.default, style = SCALARS[fd.type]
        f.kind = {"plain": "scalar", "bool": "bool", "string": "string", "bytes": "bytes"}[style]
        f.json_form = JSON_FORMS[fd.type]
    elif fd.type == F.TYPE_ENUM:
        entry = types.get(fd.type_name)
        if entry is None or entry[0] != "enum":
            raise GeneratorError(f"{where}: unknown enum type {fd.type_name}")
        f.kind, f.swift_type, f.wire, f.default = "enum", entry[1], "varint", ".init(rawValue: 0)"
        f.c_type = entry[2]
        f.json_form = "enumeration"
    elif fd.type == F.TYPE_MESSAGE:
        entry = types.get(fd.type_name)
        if entry is None:
            raise GeneratorError(f"{where}: unknown message type {fd.type_name}")
        f.kind, f.wire, f.json_form = "message", "message", "message"
        if entry[0] == "map":
            f.swift_type, f.c_type, f.c_prefix = None, entry[2], entry[3]
        else:
            f.swift_type, f.c_type, f.c_prefix = entry[1], entry[2], entry[3]
            f.message_full_name = fd.type_name[1:]
    else:
        raise GeneratorError(f"{where}: field type {TYPE_NAMES.get(fd.type, fd.type)} is not supported")

    if fd.label == F.LABEL_REPEATED:
        entry = types.get(fd.type_name) if fd.type == F.TYPE_MESSAGE else None
        if entry is not None and entry[0] == "map":
            f.shape = "map"
        elif f.kind in ("string", "bytes", "message"):
            f.shape = "repeated"
        else:
            raise GeneratorError(f"{where}: repeated {TYPE_NAMES.get(fd.type)} (packed encoding) is not "
                                 "supported")
    elif f.kind == "message":
        f.shape = "optional_message"
    else:
        f.shape = "singular"
    return f


def build_service(package, sd, types, comments, path):
    full = f"{package}.{sd.name}"
    methods = []
    for mi, md in enumerate(sd.method):
        for t in (md.input_type, md.output_type):
            if types.get(t, ("",))[0] != "message":
                raise GeneratorError(f"{full}.{md.name}: {t} is not a top-level message of this package")
        methods.append(Method(md.name, swift_ident(lower_camel(c_camel_to_lower(md.name))),
                              f"{full}/{md.name}", types[md.input_type][1], types[md.output_type][1],
                              md.client_streaming, md.server_streaming, comments.get(*path, 2, mi),
                              md.options.idempotency_level == d.MethodOptions.NO_SIDE_EFFECTS))
    return Service(full, sd.name, methods, comments.get(*path))


def check_names(schema):
    top = {}
    for f in schema.files:
        for item in f.messages + f.enums + f.services:
            name = item.swift_name.split(".")[-1]
            if name in top:
                raise GeneratorError(f"{item.full_name}: Swift name {name} is used twice")
            top[name] = item
    for m in schema.messages:
        names = {}
        for member in m.members:
            if member.swift_name in names or member.swift_name.strip("`") in RESERVED_MEMBER_NAMES:
                raise GeneratorError(f"{m.full_name}: property name {member.swift_name} clashes")
            names[member.swift_name] = member
        nested = {e.swift_name.split(".")[-1] for e in m.enums}
        for one in m.oneofs:
            if one.type_name in nested:
                raise GeneratorError(f"{m.full_name}: oneof type {one.type_name} clashes with a nested enum")
            nested.add(one.type_name)
            cases = set()
            for f in one.fields:
                if f.case_name in cases:
                    raise GeneratorError(f"{m.full_name}.{one.proto_name}: case {f.case_name} clashes")
                cases.add(f.case_name)


def check_acyclic(schema):
    """protoc-c recurses per nesting level; refusing recursive schemas keeps decode depth bounded."""
    by_name = {m.full_name: m for m in schema.messages}

    def deps(m):
        for f in m.fields:
            if f.kind == "message":
                if f.shape == "map":
                    if f.value_field.kind == "message":
                        yield f.value_field.message_full_name
                else:
                    yield f.message_full_name

    state = {}

    def visit(name, stack):
        if state.get(name) == "done":
            return
        if state.get(name) == "active":
            raise GeneratorError("recursive messages are not supported: " + " -> ".join(stack + [name]))
        state[name] = "active"
        for dep in deps(by_name[name]):
            visit(dep, stack + [name])
        state[name] = "done"

    for name in by_name:
        visit(name, [])
