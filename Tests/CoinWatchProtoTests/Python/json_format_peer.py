#!/usr/bin/python3
"""The official protobuf runtime's JSON mapping (google.protobuf.json_format), as a peer for the Swift tests.

Usage: json_format_peer.py PROTO_DIR WORK_DIR

Generates Python stubs for PROTO_DIR/coinwatch/v1/*.proto with protoc into WORK_DIR, then answers one request
per line of standard input with one JSON line on standard output:

  {"op": "parse", "type": T, "json": J, "binary": B64}
      Parses J with json_format.Parse and B64 (the same value's binary encoding) with FromString.
      Answers {"equal": bool, "canonical": bool, "python": J2} where equal says the two messages are equal,
      canonical says J means the same JSON document as MessageToJson's own output J2, or {"error": text}.
  {"op": "print", "type": T, "binary": B64, "names": bool, "defaults": bool, "enumNumbers": bool}
      Answers {"json": MessageToJson(message, ...)} with the options chosen (proto field names, default
      values written out, enums as numbers), or {"error": text}.
"""
import base64
import glob
import importlib
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True


def load_types(proto_dir, work_dir):
    protos = sorted(glob.glob(os.path.join(proto_dir, "coinwatch", "v1", "*.proto")))
    subprocess.run(["protoc", f"--proto_path={proto_dir}", f"--python_out={work_dir}"] + protos, check=True)
    sys.path.insert(0, work_dir)
    from google.protobuf import symbol_database  # noqa: E402
    for proto in protos:
        module = "coinwatch.v1." + os.path.splitext(os.path.basename(proto))[0] + "_pb2"
        importlib.import_module(module)
    db = symbol_database.Default()
    return lambda name: db.GetSymbol(name)


def answer(request, message_type):
    from google.protobuf import json_format
    cls = message_type(request["type"])
    binary = cls.FromString(base64.b64decode(request["binary"]))
    if request["op"] == "parse":
        parsed = json_format.Parse(request["json"], cls())
        python = json_format.MessageToJson(binary, indent=None, ensure_ascii=False)
        return {"equal": parsed == binary,
                "canonical": json.loads(request["json"]) == json.loads(python),
                "python": python}
    if request["op"] == "print":
        return {"json": json_format.MessageToJson(
            binary, including_default_value_fields=request["defaults"],
            preserving_proto_field_name=request["names"], use_integers_for_enums=request["enumNumbers"],
            indent=None if request["defaults"] else 2, ensure_ascii=request["names"])}
    raise ValueError(f"unknown op {request['op']!r}")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    message_type = load_types(argv[1], argv[2])
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = answer(json.loads(line), message_type)
        except Exception as error:  # every failure is an answer, so the Swift side sees which value failed
            reply = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
