#!/usr/bin/env bash
# Generates Python stubs from proto/ with protoc and runs the example client.
# Needs Debian's protobuf-compiler and python3-protobuf (scripts/bootstrap installs both).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
mkdir -p "$here/gen"
protoc --proto_path="$root/proto" --python_out="$here/gen" "$root"/proto/coinwatch/v1/*.proto
PYTHONPATH="$here/gen" exec /usr/bin/python3 "$here/coinwatch_client.py" "$@"
