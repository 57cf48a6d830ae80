"""HTTP/2 attacks that have hurt real servers, against a real coinwatchd: each must be refused (GOAWAY, a
reset stream, or a closed connection) within a bounded time, and the server must keep serving a well-behaved
client on another connection meanwhile.

Usage: python http2_abuse.py --server HOST:PORT   (coinwatchd started with --slow-consumer-timeout 2s)
Frames are written by hand (HPACK from the hpack package that h2 depends on), since a client library would
refuse to send most of them.
"""
import argparse
import socket
import struct
import sys
import time

from hpack import Encoder

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
NO_ERROR, PROTOCOL_ERROR, REFUSED_STREAM, CANCEL, ENHANCE_YOUR_CALM = 0x0, 0x1, 0x7, 0x8, 0xB


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def grpc_message(payload):
    return b"\x00" + struct.pack(">I", len(payload)) + payload


class Client:
    """A raw HTTP/2 connection: writes frames, reads and parses the server's."""

    def __init__(self, host, port, settings=b""):
        self.sock = socket.create_connection((host, port), timeout=30)
        self.buffer = b""
        self.encoder = Encoder()
        self.closed = False
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, settings))

    def send(self, data):
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.closed = True
            return False

    def headers(self, path, extra=(), content_type="application/grpc"):
        fields = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "coinwatch"),
                  ("content-type", content_type), ("te", "trailers")] + list(extra)
        return self.encoder.encode(fields)

    def frames(self, timeout):
        """Yields (type, flags, stream, payload) until `timeout` passes or the server closes."""
        deadline = time.monotonic() + timeout
        while True:
            while len(self.buffer) >= 9:
                length = int.from_bytes(self.buffer[:3], "big")
                if len(self.buffer) < 9 + length:
                    break
                kind, flags = self.buffer[3], self.buffer[4]
                stream = int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
                payload = self.buffer[9:9 + length]
                self.buffer = self.buffer[9 + length:]
                if kind == SETTINGS and not flags & ACK:
                    self.send(frame(SETTINGS, ACK, 0))
                yield kind, flags, stream, payload
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.closed:
                return
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.closed = True
                return
            self.buffer += chunk

    def goaway_or_close(self, timeout=30):
        """The GOAWAY error code the server sent, or 'closed' when it just closed; None if neither."""
        for kind, _, _, payload in self.frames(timeout):
            if kind == GOAWAY:
                return int.from_bytes(payload[4:8], "big")
        return "closed" if self.closed else None

    def close(self):
        self.sock.close()


def healthy(host, port):
    """A well-behaved client on a new connection gets a unary answer (Health/Check over gRPC)."""
    client = Client(host, port)
    client.send(frame(HEADERS, END_HEADERS, 1, client.headers("/coinwatch.v1.Health/Check")))
    client.send(frame(DATA, END_STREAM, 1, grpc_message(b"")))
    status = None
    for kind, flags, stream, payload in client.frames(30):
        if kind == HEADERS and stream == 1 and flags & END_STREAM:
            status = payload
            break
    client.close()
    return status is not None


def fail(message):
    sys.exit("FAILED: " + message)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    options = parser.parse_args()
    host, port = options.server.rsplit(":", 1)
    port = int(port)
    if not healthy(host, port):
        fail("the server does not answer a plain gRPC call")
    passed = 0

    def check(name, ok, detail=""):
        nonlocal passed
        if not ok:
            fail(f"{name} {detail}")
        if not healthy(host, port):
            fail(f"after {name}, another connection was not served")
        passed += 1
        print(f"ok: {name} {detail}")

    # Rapid reset (2023): streams opened and reset at once, thousands of them.
    client = Client(host, port)
    batch = b""
    for index in range(2000):
        stream = 1 + 2 * index
        batch += frame(HEADERS, END_HEADERS, stream, client.headers("/coinwatch.v1.CoinWatch/StreamPrices"))
        batch += frame(RST_STREAM, 0, stream, struct.pack(">I", CANCEL))
        if index % 100 == 99:
            if not client.send(batch):
                break
            batch = b""
    client.send(batch)
    result = client.goaway_or_close()
    client.close()
    # nghttp2's reset rate limit answers with GOAWAY INTERNAL_ERROR.
    check("rapid reset", result in (ENHANCE_YOUR_CALM, 0x2, "closed"), f"(GOAWAY {result})")

    # CONTINUATION flood (2024): a header block that never ends.
    client = Client(host, port)
    client.send(frame(HEADERS, 0, 1, client.headers("/coinwatch.v1.Health/Check")))
    for _ in range(200):
        if not client.send(frame(CONTINUATION, 0, 1, client.encoder.encode([("x-filler", "y" * 100)]))):
            break
    result = client.goaway_or_close()
    client.close()
    check("CONTINUATION flood", result is not None, f"(GOAWAY {result})")

    # SETTINGS flood: every SETTINGS frame costs the server an acknowledgement.
    client = Client(host, port)
    client.send(b"".join(frame(SETTINGS, 0, 0) for _ in range(2000)))
    result = client.goaway_or_close()
    client.close()
    check("SETTINGS flood", result == ENHANCE_YOUR_CALM, f"(GOAWAY {result})")

    # PING flood.
    client = Client(host, port)
    client.send(b"".join(frame(PING, 0, 0, struct.pack(">Q", index)) for index in range(2000)))
    result = client.goaway_or_close()
    client.close()
    check("PING flood", result == ENHANCE_YOUR_CALM, f"(GOAWAY {result})")

    # A huge header block (200 KiB of fields in HEADERS + CONTINUATIONs): the stream is refused.
    client = Client(host, port)
    block = client.headers("/coinwatch.v1.Health/Check", [("x-big-%d" % index, "z" * 4000) for index in range(50)])
    chunks = [block[start:start + 16384] for start in range(0, len(block), 16384)]
    data = frame(HEADERS, 0 if len(chunks) > 1 else END_HEADERS, 1, chunks[0])
    for index, chunk in enumerate(chunks[1:], 1):
        data += frame(CONTINUATION, END_HEADERS if index == len(chunks) - 1 else 0, 1, chunk)
    client.send(data + frame(DATA, END_STREAM, 1, grpc_message(b"")))
    answered = False
    refused = None
    for kind, flags, stream, payload in client.frames(30):
        if stream == 1 and kind == HEADERS:
            answered = True
        if stream == 1 and kind == RST_STREAM:
            refused = int.from_bytes(payload, "big")
            break
        if kind == GOAWAY:
            refused = "GOAWAY %d" % int.from_bytes(payload[4:8], "big")
            break
    if refused is None and client.closed:
        refused = "closed"
    client.close()
    check("huge header block", refused is not None and not answered, f"(refused: {refused})")

    # A window never opened: the client grants its streams no flow-control window and reads nothing; the
    # price stream conflates, then is reset as a slow consumer (ENHANCE_YOUR_CALM) after the timeout.
    client = Client(host, port, settings=struct.pack(">HI", 0x4, 0))
    client.send(frame(HEADERS, END_HEADERS, 1, client.headers("/coinwatch.v1.CoinWatch/StreamPrices")))
    client.send(frame(DATA, END_STREAM, 1, grpc_message(b"")))
    reset = None
    for kind, flags, stream, payload in client.frames(60):
        if stream == 1 and kind == RST_STREAM:
            reset = int.from_bytes(payload, "big")
            break
        if stream == 1 and kind == DATA:
            fail("the server sent DATA beyond a zero window")
    client.close()
    check("window never opened", reset == ENHANCE_YOUR_CALM, f"(RST_STREAM {reset})")

    # More concurrent streams than the server advertised (100): the excess is refused.
    client = Client(host, port)
    list(client.frames(2))  # the server's SETTINGS, acknowledged
    data = b""
    for index in range(150):
        stream = 1 + 2 * index
        data += frame(HEADERS, END_HEADERS, stream, client.headers("/coinwatch.v1.CoinWatch/StreamPrices"))
        data += frame(DATA, END_STREAM, stream, grpc_message(b""))
    client.send(data)
    refused_streams = set()
    goaway = None
    for kind, flags, stream, payload in client.frames(10):
        if kind == RST_STREAM and int.from_bytes(payload, "big") in (REFUSED_STREAM, PROTOCOL_ERROR):
            refused_streams.add(stream)
        if kind == GOAWAY:
            goaway = int.from_bytes(payload[4:8], "big")
            break
    client.close()
    check("more streams than advertised", len(refused_streams) >= 50 or goaway == PROTOCOL_ERROR,
          f"({len(refused_streams)} refused, GOAWAY {goaway})")
    print(f"http2 abuse: {passed} attacks refused, the server kept serving")


if __name__ == "__main__":
    main()
