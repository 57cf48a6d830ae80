#!/usr/bin/env bash
# Builds this example the way another package depends on CoinWatch, by version, and runs it.
#
#   examples/swift-client/run.sh [--debug] [ARGUMENTS...]     (ARGUMENTS go to the example; see main.swift)
#
# The dependency is `.package(url: …, from: "0.1.0")`. So that the example builds against this checkout (with
# uncommitted changes), the script copies the checkout's files into a throwaway git repository under
# .build/swift-client/, commits them there and tags that commit 0.1.0; the checkout's own history is never tagged.
# COINWATCH_PACKAGE_URL points the example's Package.swift at that repository. The build is release unless
# --debug: release is the configuration in which the library's targets carry an unsafe compiler flag, which
# SwiftPM accepts in a dependency only from tools version 6.2.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
configuration=release
if [[ "${1:-}" == "--debug" ]]; then
    configuration=debug
    shift
fi

# Everything from scratch: the tag names a new commit on every run, and a stale resolution or build plan would
# point at files of the previous one.
scratch="$root/.build/swift-client"
snapshot="$scratch/coinwatch"
rm -rf "$scratch" "$here/Package.resolved"
mkdir -p "$snapshot"
# Every file git would consider part of the checkout (tracked or new, not ignored) that exists now.
(cd "$root" && git ls-files -z --cached --others --exclude-standard \
    | while IFS= read -r -d '' file; do [[ -f "$file" ]] && printf '%s\0' "$file"; done \
    | tar --null -T - -cf -) | tar -C "$snapshot" -xf -
git -C "$snapshot" init -q
git -C "$snapshot" add -A
git -C "$snapshot" -c user.name=coinwatch -c user.email=coinwatch@localhost commit -q -m "snapshot of $root"
git -C "$snapshot" tag 0.1.0

export COINWATCH_PACKAGE_URL="file://$snapshot"
swift build --package-path "$here" --scratch-path "$scratch/build" --disable-dependency-cache -c "$configuration" >&2
rm -f "$here/Package.resolved"
exec "$scratch/build/$configuration/coinwatch-client-example" "$@"
