#!/usr/bin/env python3
"""Connect protocol conformance of a real coinwatchd, checked with hand-made requests that follow the
specification (Python's http.client over HTTP/1.1, curl for HTTP/2 prior knowledge), independent of the server's
code: unary and streaming, proto and JSON, GET, the HTTP status of every error the service can be made to
return, deadlines, a truncated request stream, oversize messages, wrong content types, CORS.

A step of scripts/test ("connect conformance").

Usage: "$(scripts/python-env)/bin/python" scripts/connect/connect_conformance.py COINWATCHD

Starts COINWATCHD itself (port 0, a temporary data directory, no price feed) and stops it. Prints one line per
check and a closing "N passed, N failed" line.
"""
import base64
import http.client
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "scripts", "browser"))
from browser_support import Runner, pb  # noqa: E402
from google.protobuf import json_format  # noqa: E402

SERVICE = "/coinwatch.v1.CoinWatch/"
TOKEN = "conformance-token"
ORIGIN = "https://dashboard.example"


class Server:
    def __init__(self, binary):
        self.work = tempfile.TemporaryDirectory(prefix="connect-conformance.")
        self.log = open(os.path.join(self.work.name, "log"), "w+")
        self.process = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--data", os.path.join(self.work.name, "data"), "--feed", "none",
             "--publish-token", TOKEN, "--cors-origin", ORIGIN, "--max-frame-bytes", "65536"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.port = None
        for _ in range(1200):  # bounded: 60 s however busy the machine
            self.log.seek(0)
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.log.read())
            if match:
                self.port = int(match.group(1))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.log.seek(0)
        raise RuntimeError("coinwatchd did not start:\n" + self.log.read())

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.work.cleanup()


def request(server, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response, data


def unary(server, name, body, content_type="application/json", headers=None):
    all_headers = {"Content-Type": content_type, "Connect-Protocol-Version": "1"}
    all_headers.update(headers or {})
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    return request(server, "POST", SERVICE + name, body, all_headers)


def envelope(flags, payload):
    return struct.pack(">BI", flags, len(payload)) + payload


def envelopes(data):
    """The (flags, payload) envelopes of a streaming body; fails on trailing bytes."""
    out, position = [], 0
    while position < len(data):
        assert len(data) - position >= 5, f"a truncated envelope header at byte {position}"
        flags, length = struct.unpack(">BI", data[position:position + 5])
        assert len(data) - position - 5 >= length, f"a truncated envelope at byte {position}"
        out.append((flags, data[position + 5:position + 5 + length]))
        position += 5 + length
    return out


def expect_error(response, data, status, code):
    assert response.status == status, f"HTTP {response.status}, expected {status}: {data[:200]!r}"
    assert response.getheader("Content-Type", "").startswith("application/json"), response.getheader("Content-Type")
    body = json.loads(data)
    assert body["code"] == code, body
    return body


def settings_request(device, symbol="BTC", below=(600005, 1), expected=None):
    request = pb.SaveSettingsRequest(device_id=device)
    request.set_rules[symbol].below.CopyFrom(pb.Decimal(mantissa=below[0], scale=below[1]))
    if expected is not None:
        request.expected_version = expected
    return request


# ---------------------------------------------------------------------------------------------------------

def test_unary_json_and_proto(server):
    device = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
    response, data = unary(server, "GetSettings", {"deviceId": device})
    expect_error(response, data, 404, "not_found")
    save = json_format.MessageToJson(settings_request(device, expected=0), indent=None)
    response, data = unary(server, "SaveSettings", save.encode())
    assert response.status == 200, data
    assert response.getheader("Content-Type") == "application/json"
    saved = json_format.Parse(data, pb.SaveSettingsResponse())
    assert saved.settings.version == 1 and saved.settings.rules["BTC"].below.mantissa == 600005
    assert json.loads(data)["settings"]["version"] == "1", "64-bit integers are JSON strings"
    response, data = unary(server, "GetSettings", pb.GetSettingsRequest(device_id=device.upper()).SerializeToString(),
                           "application/proto")
    assert response.status == 200 and response.getheader("Content-Type") == "application/proto"
    assert pb.GetSettingsResponse.FromString(data).settings.device_id == device


def test_get_for_methods_without_side_effects(server):
    message = urllib.parse.quote(json.dumps({"symbols": ["NONE"]}))
    response, data = request(server, "GET", f"{SERVICE}GetPrices?connect=v1&encoding=json&message={message}")
    assert response.status == 200, data
    assert json.loads(data) == {}
    encoded = base64.urlsafe_b64encode(pb.HealthCheckRequest().SerializeToString() + b"").decode().rstrip("=")
    response, data = request(server, "GET", f"/coinwatch.v1.Health/Check?encoding=proto&base64=1&message={encoded}")
    assert response.status == 200, data
    assert pb.HealthCheckResponse.FromString(data).status in (1, 2)
    response, data = request(server, "GET", f"{SERVICE}SaveSettings?encoding=json&message=%7B%7D")
    assert response.status == 405 and "POST" in response.getheader("Allow", ""), (response.status, data)


def test_error_codes_and_statuses(server):
    device = "conformance-errors"
    # invalid_argument 400: a device id the service refuses.
    response, data = unary(server, "GetSettings", {"deviceId": ""})
    expect_error(response, data, 400, "invalid_argument")
    # invalid_argument 400: JSON that is not the message.
    response, data = unary(server, "GetSettings", b'{"deviceId": 7}')
    body = expect_error(response, data, 400, "invalid_argument")
    assert "deviceId" in body["message"], body
    # aborted 409: an expected_version that does not match.
    unary(server, "SaveSettings", json_format.MessageToJson(settings_request(device), indent=None).encode())
    response, data = unary(server, "SaveSettings",
                           json_format.MessageToJson(settings_request(device, expected=9), indent=None).encode())
    expect_error(response, data, 409, "aborted")
    # unauthenticated 401: PublishPrices without the token, then accepted with it.
    publish = {"ticks": [{"symbol": "CONF", "price": {"mantissa": "1"}}]}
    response, data = unary(server, "PublishPrices", publish)
    expect_error(response, data, 401, "unauthenticated")
    response, data = unary(server, "PublishPrices", publish, headers={"Authorization": "Bearer " + TOKEN})
    assert response.status == 200 and json.loads(data) == {"accepted": 1}, data
    # unimplemented 404 for a method that does not exist.
    response, data = unary(server, "NoSuchMethod", {})
    assert response.status == 404, response.status
    # resource_exhausted 429: a message over the limit (--max-frame-bytes 65536).
    response, data = unary(server, "GetSettings", json.dumps({"deviceId": "x" * 70000}).encode())
    expect_error(response, data, 429, "resource_exhausted")


def test_wrong_content_types_and_headers(server):
    for content_type in ("text/plain", "application/grpc", "application/connect+json", "application/json; charset=latin1"):
        response, data = unary(server, "GetSettings", {"deviceId": "x"}, content_type)
        assert response.status == 415, (content_type, response.status)
        assert "application/json" in response.getheader("Accept-Post", ""), response.getheaders()
    response, data = unary(server, "GetSettings", {"deviceId": "x"}, headers={"Connect-Protocol-Version": "2"})
    expect_error(response, data, 400, "invalid_argument")
    response, data = unary(server, "GetSettings", {"deviceId": "x"}, headers={"Content-Encoding": "gzip"})
    expect_error(response, data, 501, "unimplemented")
    response, data = unary(server, "GetSettings", {"deviceId": "x"}, headers={"Connect-Timeout-Ms": "soon"})
    expect_error(response, data, 400, "invalid_argument")


def stream(server, name, message, content_type="application/connect+json", headers=None, raw=None, read=None):
    """A streaming call over HTTP/1.1; returns (response, envelopes) after reading `read` bytes or to the end."""
    payload = raw if raw is not None else envelope(0, message)
    all_headers = {"Content-Type": content_type, "Connect-Protocol-Version": "1"}
    all_headers.update(headers or {})
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("POST", SERVICE + name, body=payload, headers=all_headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response, envelopes(data)


def test_streaming_json_and_proto_with_deadline(server):
    unary(server, "PublishPrices", {"ticks": [{"symbol": "STRM", "price": {"mantissa": "42", "scale": 1}}]},
          headers={"Authorization": "Bearer " + TOKEN})
    # A deadline ends the stream: the snapshot, then the end-of-stream message with deadline_exceeded.
    response, parts = stream(server, "StreamPrices", json.dumps({"symbols": ["STRM"]}).encode(),
                             headers={"Connect-Timeout-Ms": "2000"})
    assert response.status == 200 and response.getheader("Content-Type") == "application/connect+json"
    assert response.getheader("Transfer-Encoding") == "chunked", "HTTP/1.1 streams are chunked"
    assert [flags for flags, _ in parts] == [0, 2], parts
    update = json_format.Parse(parts[0][1], pb.PriceUpdate())
    assert update.symbol == "STRM" and update.price.mantissa == 42 and update.sequence == 1
    assert json.loads(parts[-1][1])["error"]["code"] == "deadline_exceeded", parts[-1]
    response, parts = stream(server, "StreamPrices", pb.StreamPricesRequest(symbols=["STRM"]).SerializeToString(),
                             "application/connect+proto", headers={"Connect-Timeout-Ms": "2000"})
    assert response.getheader("Content-Type") == "application/connect+proto"
    assert pb.PriceUpdate.FromString(parts[0][1]).sequence == 1
    assert json.loads(parts[-1][1])["error"]["code"] == "deadline_exceeded"


def test_truncated_and_oversize_request_streams(server):
    for raw, code in ((b"\x00\x00\x00\x00\x10{}", "invalid_argument"),       # announces 16 bytes, sends 2
                      (b"\x00\x00", "invalid_argument"),                      # not even a header
                      (struct.pack(">BI", 0, 70000) + b"x" * 70000, "resource_exhausted"),
                      (envelope(1, b"{}"), "unimplemented")):                # compressed
        response, parts = stream(server, "StreamAlerts", b"", raw=raw)
        assert response.status == 200 and parts and parts[-1][0] == 2, (raw[:8], response.status, parts)
        assert json.loads(parts[-1][1])["error"]["code"] == code, (raw[:8], parts[-1])


def test_http2_prior_knowledge(server):
    body = json.dumps({"deviceId": "3f2504e0-4f89-11d3-9a0c-0305e82c3301"})
    result = subprocess.run(["curl", "-sS", "--http2-prior-knowledge", "-o", "-", "-w", "\n%{http_version} %{http_code}",
                             "-H", "content-type: application/json", "-d", body,
                             f"http://127.0.0.1:{server.port}{SERVICE}GetSettings"],
                            capture_output=True, timeout=60, check=True)
    text, status = result.stdout.decode().rsplit("\n", 1)
    assert status == "2 200", (status, text)
    assert json.loads(text)["settings"]["version"] == "1"
    framed = envelope(0, json.dumps({"symbols": ["STRM"]}).encode())
    result = subprocess.run(["curl", "-sS", "--http2-prior-knowledge", "-o", "-", "-H", "content-type: application/connect+json",
                             "-H", "connect-timeout-ms: 2000", "--data-binary", "@-",
                             f"http://127.0.0.1:{server.port}{SERVICE}StreamPrices"],
                            input=framed, capture_output=True, timeout=60, check=True)
    parts = envelopes(result.stdout)
    assert [flags for flags, _ in parts] == [0, 2], parts


def test_cors(server):
    headers = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
               "Access-Control-Request-Headers": "content-type,connect-protocol-version"}
    response, _ = request(server, "OPTIONS", SERVICE + "GetSettings", headers=headers)
    assert response.status == 204 and response.getheader("Access-Control-Allow-Origin") == ORIGIN, response.getheaders()
    response, _ = request(server, "OPTIONS", SERVICE + "GetSettings", headers=dict(headers, Origin="https://evil.example"))
    assert response.status == 403 and response.getheader("Access-Control-Allow-Origin") is None
    response, _ = unary(server, "GetSettings", {"deviceId": "x"}, headers={"Origin": ORIGIN})
    assert response.getheader("Access-Control-Allow-Origin") == ORIGIN


def test_dashboard_assets(server):
    response, data = request(server, "GET", "/")
    assert response.status == 200 and response.getheader("Content-Type") == "text/html; charset=utf-8"
    assert b"/dashboard.js" in data and response.getheader("Content-Security-Policy")
    etag = response.getheader("ETag")
    response, data = request(server, "GET", "/", headers={"If-None-Match": etag})
    assert response.status == 304 and data == b""


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    server = Server(os.path.abspath(argv[1]))
    runner = Runner()
    try:
        for name, test in [(n, f) for n, f in globals().items() if n.startswith("test_")]:
            runner.run(name, test, server)
    finally:
        server.stop()
    return runner.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
