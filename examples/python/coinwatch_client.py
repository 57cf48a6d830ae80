#!/usr/bin/env python3
"""A complete CoinWatch client in plain Python, using only the official protobuf runtime.

It follows docs/PROTOCOL.md: frames are a 4-byte big-endian length and a serialized
coinwatch.v1.Frame; the client sends Hello, reads Welcome, then starts calls.

    ./run.sh --server 127.0.0.1:7878         # generates the stubs from proto/ and runs this file
"""
import argparse
import socket
import struct
import sys

from coinwatch.v1 import coinwatch_pb2, rpc_pb2


class ProtocolError(Exception):
    pass


class Connection:
    def __init__(self, host, port, client_name="python-example", token=""):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.buffer = b""
        self.next_call_id = 1
        self.send(rpc_pb2.Frame(hello=rpc_pb2.Hello(protocol_version=1, client_name=client_name, auth_token=token)))
        frame = self.receive()
        if frame.WhichOneof("kind") != "welcome":
            raise ProtocolError(f"expected Welcome, got {frame}")
        self.welcome = frame.welcome

    def send(self, frame):
        body = frame.SerializeToString()
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def receive(self):
        while True:
            if len(self.buffer) >= 4:
                (length,) = struct.unpack(">I", self.buffer[:4])
                if len(self.buffer) >= 4 + length:
                    body, self.buffer = self.buffer[4:4 + length], self.buffer[4 + length:]
                    frame = rpc_pb2.Frame()
                    frame.ParseFromString(body)
                    if frame.WhichOneof("kind") == "error":
                        raise ProtocolError(f"connection error {frame.error.code}: {frame.error.message}")
                    return frame
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ProtocolError("the server closed the connection")
            self.buffer += chunk

    def start_call(self, method, request, timeout_ms=5000):
        call_id = self.next_call_id
        self.next_call_id += 1
        self.send(rpc_pb2.Frame(call=rpc_pb2.Call(
            call_id=call_id, method=method, timeout_ms=timeout_ms, payload=request.SerializeToString())))
        return call_id

    def unary(self, method, request, response_type, timeout_ms=5000):
        call_id = self.start_call(method, request, timeout_ms)
        while True:
            frame = self.receive()
            if frame.WhichOneof("kind") == "end" and frame.end.call_id == call_id:
                if frame.end.status.code != 0:
                    name = rpc_pb2.Status.Code.Name(frame.end.status.code)
                    raise ProtocolError(f"{name}: {frame.end.status.message}")
                response = response_type()
                response.ParseFromString(frame.end.payload)
                return response

    def close(self):
        self.sock.close()


def decimal_text(value):
    """coinwatch.v1.Decimal as exact text (mantissa × 10^-scale), never through a float."""
    digits = str(abs(value.mantissa)).rjust(value.scale + 1, "0")
    text = digits if value.scale == 0 else digits[:-value.scale] + "." + digits[-value.scale:]
    return ("-" if value.mantissa < 0 else "") + text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:7878")
    parser.add_argument("--messages", type=int, default=3, help="stream messages to read")
    args = parser.parse_args()
    host, _, port = args.server.rpartition(":")

    connection = Connection(host, int(port))
    print(f"connected to {connection.welcome.server_name} {connection.welcome.server_version}, "
          f"{len(connection.welcome.methods)} methods")

    health = connection.unary("coinwatch.v1.Health/Check", coinwatch_pb2.HealthCheckRequest(),
                              coinwatch_pb2.HealthCheckResponse)
    print("health:", coinwatch_pb2.HealthCheckResponse.ServingStatus.Name(health.status))

    request = coinwatch_pb2.SaveSettingsRequest(device_id="3f2504e0_4f89_11d3_9a0c_0305e82c3301")
    request.set_rules["BTC"].below.mantissa = 600005
    request.set_rules["BTC"].below.scale = 1
    saved = connection.unary("coinwatch.v1.CoinWatch/SaveSettings", request, coinwatch_pb2.SaveSettingsResponse)
    print(f"saved {saved.settings.device_id} version {saved.settings.version}: "
          f"BTC below {decimal_text(saved.settings.rules['BTC'].below)}")

    call_id = connection.start_call("coinwatch.v1.CoinWatch/StreamPrices", coinwatch_pb2.StreamPricesRequest(),
                                    timeout_ms=0)
    received = 0
    while received < args.messages:
        frame = connection.receive()
        kind = frame.WhichOneof("kind")
        if kind == "message" and frame.message.call_id == call_id:
            update = coinwatch_pb2.PriceUpdate()
            update.ParseFromString(frame.message.payload)
            marker = " (snapshot, last)" if update.snapshot_end else " (snapshot)" if update.snapshot else ""
            print(f"price #{update.sequence}: {update.symbol} {decimal_text(update.price)}{marker}")
            received += 1
        elif kind == "end" and frame.end.call_id == call_id:
            raise ProtocolError(f"stream ended early: {frame.end.status}")
    connection.send(rpc_pb2.Frame(cancel=rpc_pb2.Cancel(call_id=call_id)))
    while True:
        frame = connection.receive()
        if frame.WhichOneof("kind") == "end" and frame.end.call_id == call_id:
            print("stream ended:", rpc_pb2.Status.Code.Name(frame.end.status.code))
            break
    connection.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
