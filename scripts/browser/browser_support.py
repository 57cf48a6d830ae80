"""Shared pieces of the dashboard's browser tests: Debian's chromium driven by Playwright, Connect bodies built
with the official protobuf runtime, and a check that a screenshot is not blank.

Run with the test virtual environment: "$(scripts/python-env)/bin/python".
"""
import json
import os
import struct
import sys
import traceback
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "scripts", "reliability"))
import cwwire  # noqa: E402  (protoc stubs of proto/, made at run time)

from google.protobuf import json_format  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
pb = cwwire.pb


def envelope(flags, payload):
    """A Connect streaming envelope: flags, 4-byte big-endian length, message."""
    return struct.pack(">BI", flags, len(payload)) + payload


def json_message(message):
    """The message in the official proto3 JSON mapping, compact."""
    return json_format.MessageToJson(message, indent=None).encode()


def end_stream(error_code=None, message=""):
    body = {}
    if error_code:
        body["error"] = {"code": error_code, "message": message}
    return envelope(0x02, json.dumps(body).encode())


def price(symbol, mantissa, scale, sequence, time_ms=1_700_000_000_000, stale=None):
    update = pb.PriceUpdate(symbol=symbol, price=pb.Decimal(mantissa=mantissa, scale=scale),
                            source_time_ms=time_ms, sequence=sequence)
    text = json.loads(json_message(update))
    if stale is not None:
        # PriceUpdate.stale (field 5) may not be in this build's schema; the page must read it when present.
        text["stale"] = stale
    return json.dumps(text).encode()


def png_is_blank(data, minimum_distinct_rows=20):
    """Whether a PNG (8-bit RGB/RGBA, as Chromium writes) has fewer than `minimum_distinct_rows` distinct rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat, width, height, channels = 8, b"", 0, 0, 4
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        chunk = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8, f"bit depth {depth}"
            channels = {2: 3, 6: 4}[color]
        elif kind == b"IDAT":
            idat += chunk
        position += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels + 1
    rows, previous = set(), bytearray(stride - 1)
    for y in range(height):
        filtered = raw[y * stride:(y + 1) * stride]
        kind, line = filtered[0], bytearray(filtered[1:])
        for x in range(len(line)):  # undo the PNG filters, so equal pixels give equal rows
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            upper_left = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - upper_left
                pa, pb_, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                predictor = left if pa <= pb_ and pa <= pc else up if pb_ <= pc else upper_left
                line[x] = (line[x] + predictor) & 0xFF
        rows.add(bytes(line))
        previous = line
    return len(rows) < minimum_distinct_rows


# Records every connection state the page shows (consecutive repeats merged) in window.__states, since a state
# may last less than one poll (a scripted stream that ends at once is "live" for milliseconds).
STATE_RECORDER = """
window.__states = [];
document.addEventListener('DOMContentLoaded', () => {
  const element = document.getElementById('connection');
  new MutationObserver(() => {
    const state = element.dataset.state;
    if (window.__states[window.__states.length - 1] !== state) window.__states.push(state);
  }).observe(element, { attributes: true, attributeFilter: ['data-state'] });
});
"""


def wait_for(predicate, timeout_s, what, page):
    """Polls `predicate` every 100 ms until true; fails naming `what` after `timeout_s`."""
    for _ in range(int(timeout_s * 10)):
        if predicate():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


class Runner:
    """Runs test functions, prints each outcome and a closing 'N passed, N failed' line."""

    def __init__(self):
        self.passed, self.failed = 0, 0

    def run(self, name, function, *args):
        try:
            function(*args)
            self.passed += 1
            print(f"PASS {name}", flush=True)
        except Exception:  # a failing test is reported and the others still run
            self.failed += 1
            print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0
