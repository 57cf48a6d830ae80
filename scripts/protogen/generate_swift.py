#!/usr/bin/python3
"""Generates the Swift message layer of CoinWatchProto from a protobuf descriptor set.

Usage: generate_swift.py DESCRIPTOR_SET SOURCES_DIR TESTS_DIR

DESCRIPTOR_SET is made by `protoc --include_source_info --descriptor_set_out=...`
(without --include_imports). Writes into SOURCES_DIR the value types, the wire
schemas, the protobuf-c bridge and the proto3 JSON mapping, and into TESTS_DIR the random-instance
builders. Exits with status 1 and a message naming the construct when the
schema uses something the generator does not support.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from google.protobuf import descriptor_pb2  # noqa: E402

import emit  # noqa: E402
import emit_json  # noqa: E402
from model import GeneratorError, load_schema  # noqa: E402


def file_header_comment(descriptor_set_bytes, name):
    fds = descriptor_pb2.FileDescriptorSet()
    fds.ParseFromString(descriptor_set_bytes)
    for fp in fds.file:
        if fp.name == name:
            for loc in fp.source_code_info.location:
                if list(loc.path) == [12] and loc.leading_comments.strip():
                    return loc.leading_comments
    return None


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    descriptor_path, sources_dir, tests_dir = argv[1:]
    with open(descriptor_path, "rb") as f:
        data = f.read()
    try:
        schema = load_schema(data)
    except GeneratorError as error:
        print(f"generate-proto: unsupported schema: {error}", file=sys.stderr)
        return 1
    ns = schema.namespace
    write(os.path.join(sources_dir, f"{ns}.pb.swift"), emit.emit_namespace_file(schema))
    for pf in schema.files:
        base = os.path.splitext(os.path.basename(pf.name))[0]
        write(os.path.join(sources_dir, f"{base}.pb.swift"),
              emit.emit_values_file(pf, schema, file_header_comment(data, pf.name)))
    write(os.path.join(sources_dir, f"{ns}+WireSchemas.pb.swift"), emit.emit_schemas_file(schema))
    write(os.path.join(sources_dir, f"{ns}+CBridge.pb.swift"), emit.emit_bridge_file(schema))
    try:
        json_text = emit_json.emit_json_file(schema, emit.Writer, emit.header)
    except GeneratorError as error:
        print(f"generate-proto: unsupported schema: {error}", file=sys.stderr)
        return 1
    write(os.path.join(sources_dir, f"{ns}+JSON.pb.swift"), json_text)
    write(os.path.join(tests_dir, f"{ns}+Random.pb.swift"), emit.emit_random_file(schema))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
