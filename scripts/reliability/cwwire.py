"""Wire helpers shared by the reliability scripts (fault tests, abuse tests, the fuzz seed corpus).

Frames follow docs/PROTOCOL.md: a 4-byte big-endian length, then a serialized coinwatch.v1.Frame. The protobuf
stubs are generated from proto/ with Debian's protoc into a temporary directory on first use; run these scripts
with /usr/bin/python3, the interpreter that has python3-protobuf.
"""
import atexit
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

GET_SETTINGS = "coinwatch.v1.CoinWatch/GetSettings"
SAVE_SETTINGS = "coinwatch.v1.CoinWatch/SaveSettings"
DELETE_SETTINGS = "coinwatch.v1.CoinWatch/DeleteSettings"
STREAM_PRICES = "coinwatch.v1.CoinWatch/StreamPrices"
GET_PRICES = "coinwatch.v1.CoinWatch/GetPrices"
PUBLISH_PRICES = "coinwatch.v1.CoinWatch/PublishPrices"
STREAM_ALERTS = "coinwatch.v1.CoinWatch/StreamAlerts"
HEALTH_CHECK = "coinwatch.v1.Health/Check"


def _load_stubs():
    out = tempfile.mkdtemp(prefix="cwstubs.")
    atexit.register(shutil.rmtree, out, True)
    protos = sorted(os.path.join(ROOT, "proto", "coinwatch", "v1", name)
                    for name in os.listdir(os.path.join(ROOT, "proto", "coinwatch", "v1")) if name.endswith(".proto"))
    subprocess.run(["protoc", "--proto_path=" + os.path.join(ROOT, "proto"), "--python_out=" + out, *protos],
                   check=True)
    sys.path.insert(0, out)
    from coinwatch.v1 import coinwatch_pb2 as messages, rpc_pb2 as envelope
    return messages, envelope


pb, rpc = _load_stubs()


def code_name(code):
    return rpc.Status.Code.Name(code)


def frame_bytes(frame):
    """A frame on the wire: length prefix + body."""
    body = frame.SerializeToString()
    return struct.pack(">I", len(body)) + body


def hello(name="reliability", version=1, token=""):
    return frame_bytes(rpc.Frame(hello=rpc.Hello(protocol_version=version, client_name=name, auth_token=token)))


def call(call_id, method, request=b"", timeout_ms=0, metadata=None):
    payload = request if isinstance(request, bytes) else request.SerializeToString()
    message = rpc.Call(call_id=call_id, method=method, timeout_ms=timeout_ms, payload=payload)
    for key, value in (metadata or {}).items():
        message.metadata[key] = value
    return frame_bytes(rpc.Frame(call=message))


def cancel(call_id):
    return frame_bytes(rpc.Frame(cancel=rpc.Cancel(call_id=call_id)))


def ping(payload=b""):
    return frame_bytes(rpc.Frame(ping=rpc.Ping(payload=payload)))


class ProtocolError(Exception):
    pass


class Client:
    """A blocking connection speaking raw frames; every read has a deadline."""

    def __init__(self, port, host="127.0.0.1", handshake=True, timeout=30.0, name="reliability"):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.buffer = b""
        self.next_id = 1
        self.welcome = None
        if handshake:
            self.sock.sendall(hello(name))
            frame = self.receive()
            if frame.WhichOneof("kind") != "welcome":
                raise ProtocolError(f"expected Welcome, got {frame}")
            self.welcome = frame.welcome

    def send(self, data):
        self.sock.sendall(data)

    def receive(self, timeout=None):
        """The next frame; raises ProtocolError on end of file, socket.timeout past the deadline."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while True:
            if len(self.buffer) >= 4:
                (length,) = struct.unpack(">I", self.buffer[:4])
                if len(self.buffer) >= 4 + length:
                    body, self.buffer = self.buffer[4:4 + length], self.buffer[4 + length:]
                    frame = rpc.Frame()
                    frame.ParseFromString(body)
                    return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout("no frame before the deadline")
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ProtocolError("the server closed the connection")
            self.buffer += chunk

    def read_until_closed(self, timeout=None):
        """Everything the server sends until it closes (bytes); raises socket.timeout if it does not close."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        data = self.buffer
        self.buffer = b""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout("the server did not close the connection")
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk

    def start(self, method, request, timeout_ms=0):
        call_id = self.next_id
        self.next_id += 1
        self.send(call(call_id, method, request, timeout_ms))
        return call_id

    def unary(self, method, request, response_type=None, timeout_ms=30000):
        """(status code, message, response or None); frames of other calls are skipped."""
        call_id = self.start(method, request, timeout_ms)
        while True:
            frame = self.receive(timeout=timeout_ms / 1000 + 5)
            kind = frame.WhichOneof("kind")
            if kind == "error":
                raise ProtocolError(f"connection error {code_name(frame.error.code)}: {frame.error.message}")
            if kind == "end" and frame.end.call_id == call_id:
                response = None
                if frame.end.status.code == 0 and response_type is not None:
                    response = response_type()
                    response.ParseFromString(frame.end.payload)
                return frame.end.status.code, frame.end.status.message, response

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def split_frames(data):
    """Decodes a byte string of whole frames; raises ProtocolError on a partial or undecodable one."""
    frames = []
    offset = 0
    while offset < len(data):
        if len(data) - offset < 4:
            raise ProtocolError("partial length prefix")
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        if len(data) - offset - 4 < length:
            raise ProtocolError("partial frame")
        frame = rpc.Frame()
        frame.ParseFromString(data[offset + 4:offset + 4 + length])
        frames.append(frame)
        offset += 4 + length
    return frames


class Server:
    """A coinwatchd process on 127.0.0.1 port 0; the port is read from its startup log line."""

    def __init__(self, binary, data, args=(), log_path=None, start_timeout=30.0, prefix=None):
        """Starts coinwatchd (behind the command `prefix`, e.g. setpriv); `port` is None if it exited instead."""
        self.log_path = log_path or os.path.join(os.path.dirname(os.path.abspath(data)), "coinwatchd.log")
        offset = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [*(prefix or []), binary, "--listen", "127.0.0.1:0", "--data", data, *args],
            stdout=self.log, stderr=self.log)
        self.port = None
        deadline = time.monotonic() + start_timeout
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                text = log.read().decode(errors="replace")
            match = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
            if match:
                self.port = int(match.group(1))
                return
            if self.process.poll() is not None:
                return
            time.sleep(0.02)
        self.kill()
        raise ProtocolError("coinwatchd did not start within %.0f s" % start_timeout)

    @property
    def pid(self):
        return self.process.pid

    def rss_kib(self):
        """VmRSS from /proc/<pid>/status, in KiB."""
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        if not self.log.closed:
            self.log.close()

    def stop(self, timeout=30.0):
        """SIGTERM, then wait; returns the exit status."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            status = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = self.process.wait()
            raise ProtocolError(f"coinwatchd did not stop within {timeout:.0f} s of SIGTERM")
        finally:
            self.log.close()
        return status
