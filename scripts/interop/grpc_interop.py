"""Interop: a stock gRPC client (Python grpcio, stubs generated from proto/ at run time) against a real
coinwatchd, and its /metrics read by a real Prometheus parser.

Usage: python grpc_interop.py --server HOST:PORT --publish-token TOKEN --proto-dir proto/
Exits non-zero on the first failed check, printing what differed.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid

import grpc
import hpack
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http2_abuse  # noqa: E402  (its raw HTTP/2 client)


def generate_stubs(proto_dir, out):
    # The standard services' files are copied flat: a `grpc/...` package path would shadow grpcio itself.
    flat = os.path.join(out, "flat")
    os.makedirs(flat)
    for source, name in [("grpc/health/v1/health.proto", "std_health.proto"),
                         ("grpc/reflection/v1/reflection.proto", "std_reflection.proto")]:
        shutil.copy(os.path.join(proto_dir, source), os.path.join(flat, name))
    for include, files in [(proto_dir, ["coinwatch/v1/coinwatch.proto"]), (flat, ["std_health.proto", "std_reflection.proto"])]:
        subprocess.check_call([sys.executable, "-m", "grpc_tools.protoc", "-I" + include, "--python_out=" + out,
                               "--grpc_python_out=" + out] + files)
    sys.path.insert(0, out)


class Checks:
    def __init__(self):
        self.count = 0

    def equal(self, what, actual, expected):
        self.count += 1
        if actual != expected:
            sys.exit(f"FAILED: {what}: expected {expected!r}, got {actual!r}")

    def true(self, what, condition, detail=""):
        self.count += 1
        if not condition:
            sys.exit(f"FAILED: {what} {detail}")

    def status(self, what, call, code, message_part=None):
        """Runs `call`, which must fail with `code` (and a message containing `message_part`)."""
        self.count += 1
        try:
            call()
        except grpc.RpcError as error:
            if error.code() != code:
                sys.exit(f"FAILED: {what}: expected {code}, got {error.code()} ({error.details()!r})")
            if message_part is not None and message_part not in (error.details() or ""):
                sys.exit(f"FAILED: {what}: message {error.details()!r} lacks {message_part!r}")
            return error
        sys.exit(f"FAILED: {what}: expected {code}, the call succeeded")


def metrics(host_port):
    with urllib.request.urlopen(f"http://{host_port}/metrics", timeout=30) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples, name, **labels):
    total = 0.0
    found = False
    for (sample_name, sample_labels), sample_value in samples.items():
        if sample_name != name:
            continue
        as_dict = dict(sample_labels)
        if all(as_dict.get(key) == wanted for key, wanted in labels.items()):
            total += sample_value
            found = True
    return total if found else None


def eventually(condition, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--publish-token", required=True)
    parser.add_argument("--proto-dir", required=True)
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="coinwatch-interop-")
    try:
        generate_stubs(options.proto_dir, work)
        run(options, Checks())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(options, check):
    from coinwatch.v1 import coinwatch_pb2 as pb
    from coinwatch.v1 import coinwatch_pb2_grpc as rpc
    import std_health_pb2 as health_pb
    import std_health_pb2_grpc as health_rpc
    import std_reflection_pb2 as reflection_pb
    import std_reflection_pb2_grpc as reflection_rpc
    from google.protobuf import descriptor_pb2

    channel = grpc.insecure_channel(options.server)
    grpc.channel_ready_future(channel).result(timeout=60)
    stub = rpc.CoinWatchStub(channel)
    before = metrics(options.server)
    started_before = value(before, "grpc_server_started_total", grpc_method="GetSettings", transport="grpc")
    check.equal("GetSettings started over gRPC before any call (pre-created at 0)", started_before, 0.0)

    # Unary calls, and the errors they can end with, each with its message.
    device = str(uuid.uuid4())
    check.status("unknown device", lambda: stub.GetSettings(pb.GetSettingsRequest(device_id=device), timeout=30),
                 grpc.StatusCode.NOT_FOUND, device)
    check.status("malformed device id (message percent-encoded: non-ASCII survives)",
                 lambda: stub.GetSettings(pb.GetSettingsRequest(device_id="café"), timeout=30),
                 grpc.StatusCode.INVALID_ARGUMENT, "1–128 characters")
    rules = {"BTC": pb.AlertRule(below=pb.Decimal(mantissa=50000, scale=0))}
    saved = stub.SaveSettings(pb.SaveSettingsRequest(device_id=device, set_rules=rules), timeout=30)
    check.equal("saved version", saved.settings.version, 1)
    got = stub.GetSettings(pb.GetSettingsRequest(device_id=device), timeout=30)
    check.equal("read back", got.settings.rules["BTC"].below.mantissa, 50000)
    check.status("stale expected_version",
                 lambda: stub.SaveSettings(pb.SaveSettingsRequest(device_id=device, expected_version=7), timeout=30),
                 grpc.StatusCode.ABORTED, "expected version 7")
    check.status("an unknown method",
                 lambda: channel.unary_unary("/coinwatch.v1.CoinWatch/NoSuchMethod")(b"", timeout=30),
                 grpc.StatusCode.UNIMPLEMENTED, "NoSuchMethod")
    check.status("a request that is not the method's message",
                 lambda: channel.unary_unary("/coinwatch.v1.CoinWatch/GetSettings")(b"\xff\xff", timeout=30),
                 grpc.StatusCode.INVALID_ARGUMENT, "GetSettingsRequest")
    big = pb.PublishPricesRequest(ticks=[pb.Tick(symbol="X" * 1000)] * 5000)
    check.status("a request over the message limit",
                 lambda: stub.PublishPrices(big, timeout=30), grpc.StatusCode.RESOURCE_EXHAUSTED, "exceeds the limit")

    # Metadata reaches the handler: PublishPrices checks the `authorization` metadata.
    tick = pb.PublishPricesRequest(ticks=[pb.Tick(symbol="INTEROP", price=pb.Decimal(mantissa=12345, scale=2))])
    check.status("publish without the token", lambda: stub.PublishPrices(tick, timeout=30),
                 grpc.StatusCode.UNAUTHENTICATED, "publish token")
    check.status("publish with a wrong token",
                 lambda: stub.PublishPrices(tick, timeout=30, metadata=[("authorization", "Bearer wrong")]),
                 grpc.StatusCode.UNAUTHENTICATED)
    published = stub.PublishPrices(tick, timeout=30, metadata=[("authorization", "Bearer " + options.publish_token)])
    check.equal("publish with 'Bearer <token>' metadata", published.accepted, 1)
    prices = stub.GetPrices(pb.GetPricesRequest(symbols=["INTEROP"]), timeout=30)
    check.equal("the published price", [(p.symbol, p.price.mantissa) for p in prices.prices], [("INTEROP", 12345)])

    # A server stream: snapshot first, sequence numbers from 1.
    stream = stub.StreamPrices(pb.StreamPricesRequest(symbols=["INTEROP"]), timeout=60)
    first = next(stream)
    check.equal("snapshot first", (first.symbol, first.price.mantissa, first.sequence), ("INTEROP", 12345, 1))
    stub.PublishPrices(pb.PublishPricesRequest(ticks=[pb.Tick(symbol="INTEROP", price=pb.Decimal(mantissa=12346, scale=2))]),
                       timeout=30, metadata=[("authorization", "Bearer " + options.publish_token)])
    second = next(stream)
    check.equal("the next tick", (second.price.mantissa, second.sequence), (12346, 2))
    # Cancelled by the client: the server sees the reset and ends the call CANCELLED.
    stream.cancel()
    check.true("the server counts the cancelled stream", eventually(lambda: (value(
        metrics(options.server), "grpc_server_handled_total", grpc_method="StreamPrices", grpc_code="Canceled",
        transport="grpc") or 0) >= 1))

    # A deadline: grpc-timeout becomes the call's deadline on the server, which ends it DEADLINE_EXCEEDED.
    def drain_with_deadline():
        for _ in stub.StreamPrices(pb.StreamPricesRequest(symbols=["INTEROP"]), timeout=0.5):
            pass
    check.status("a stream past its deadline", drain_with_deadline, grpc.StatusCode.DEADLINE_EXCEEDED)
    # grpcio cancels at its own deadline too; a raw client that does not shows the server's own trailers.
    host, port = options.server.rsplit(":", 1)
    raw = http2_abuse.Client(host, int(port))
    raw.send(http2_abuse.frame(http2_abuse.HEADERS, http2_abuse.END_HEADERS, 1, raw.headers(
        "/coinwatch.v1.CoinWatch/StreamPrices", [("grpc-timeout", "300m")])))
    raw.send(http2_abuse.frame(http2_abuse.DATA, http2_abuse.END_STREAM, 1, http2_abuse.grpc_message(b"")))
    decoder = hpack.Decoder()
    trailers = None
    for kind, flags, stream, payload in raw.frames(60):
        if kind == http2_abuse.HEADERS and stream == 1:
            fields = dict(decoder.decode(payload))
            if flags & http2_abuse.END_STREAM:
                trailers = fields
                break
    raw.close()
    check.equal("the server's own deadline (grpc-timeout 300m) ends the call", (trailers or {}).get("grpc-status"), "4")
    check.equal("with a percent-encoded message", (trailers or {}).get("grpc-message"), "deadline of 300 ms exceeded")

    # The answer names the content type the request named: `application/grpc+proto` (in any case) is echoed,
    # `application/grpc` stays as it is; a Trailers-Only refusal (an unknown method) does the same.
    for path, asked, expected in [("/coinwatch.v1.Health/Check", "application/grpc+proto", "application/grpc+proto"),
                                  ("/coinwatch.v1.Health/Check", "Application/GRPC+Proto", "application/grpc+proto"),
                                  ("/coinwatch.v1.Health/Check", "application/grpc", "application/grpc"),
                                  ("/coinwatch.v1.Health/NoSuchMethod", "application/grpc+proto", "application/grpc+proto")]:
        raw = http2_abuse.Client(host, int(port))
        raw.send(http2_abuse.frame(http2_abuse.HEADERS, http2_abuse.END_HEADERS, 1, raw.headers(path, content_type=asked)))
        raw.send(http2_abuse.frame(http2_abuse.DATA, http2_abuse.END_STREAM, 1, http2_abuse.grpc_message(b"")))
        decoder = hpack.Decoder()
        first = None
        for kind, flags, stream, payload in raw.frames(60):
            if kind == http2_abuse.HEADERS and stream == 1:
                first = dict(decoder.decode(payload))
                break
        raw.close()
        check.equal(f"{path} asked as {asked}: the answer's content type", (first or {}).get("content-type"), expected)

    # A slow reader of every symbol (the simulated feed ticks fast): the stream conflates to the latest price per
    # symbol instead of queueing; what arrives keeps consecutive sequence numbers.
    slow = stub.StreamPrices(pb.StreamPricesRequest(), timeout=120)
    sequences = []
    for update in slow:
        sequences.append(update.sequence)
        if len(sequences) >= 40:
            break
        if len(sequences) > 10:
            time.sleep(0.1)
    slow.cancel()
    check.equal("a slow reader's sequence numbers stay consecutive", sequences, list(range(1, len(sequences) + 1)))

    # Health, the standard service.
    health = health_rpc.HealthStub(channel)
    check.equal("health Check", health.Check(health_pb.HealthCheckRequest(), timeout=30).status,
                health_pb.HealthCheckResponse.SERVING)
    check.equal("health Check of the service",
                health.Check(health_pb.HealthCheckRequest(service="coinwatch.v1.CoinWatch"), timeout=30).status,
                health_pb.HealthCheckResponse.SERVING)
    check.status("health Check of an unknown service",
                 lambda: health.Check(health_pb.HealthCheckRequest(service="nope"), timeout=30),
                 grpc.StatusCode.NOT_FOUND, "nope")
    watch = health.Watch(health_pb.HealthCheckRequest(service="coinwatch.v1.CoinWatch"), timeout=30)
    check.equal("health Watch starts with the status", next(watch).status, health_pb.HealthCheckResponse.SERVING)
    watch.cancel()

    # Reflection lists the services and describes them.
    reflection = reflection_rpc.ServerReflectionStub(channel)
    requests = [reflection_pb.ServerReflectionRequest(list_services=""),
                reflection_pb.ServerReflectionRequest(file_containing_symbol="coinwatch.v1.CoinWatch")]
    answers = list(reflection.ServerReflectionInfo(iter(requests), timeout=30))
    names = [service.name for service in answers[0].list_services_response.service]
    check.true("reflection lists the service", "coinwatch.v1.CoinWatch" in names and "grpc.health.v1.Health" in names,
               str(names))
    descriptor = descriptor_pb2.FileDescriptorProto()
    descriptor.ParseFromString(answers[1].file_descriptor_response.file_descriptor_proto[0])
    methods = [method.name for method in descriptor.service[0].method]
    check.true("reflection describes the service", "GetSettings" in methods and "StreamPrices" in methods, str(methods))
    # Every listed service is described too (Admin, the standard services): grpcurl's describe works for each.
    undescribed = []
    for name in names:
        answer = list(reflection.ServerReflectionInfo(
            iter([reflection_pb.ServerReflectionRequest(file_containing_symbol=name)]), timeout=30))[0]
        if answer.HasField("error_response") or not answer.file_descriptor_response.file_descriptor_proto:
            undescribed.append(name)
    check.true("reflection describes every listed service", not undescribed and "coinwatch.v1.Admin" in names,
               f"listed {names}, not described {undescribed}")

    # Metrics, parsed by prometheus_client, against the calls made above.
    after = metrics(options.server)
    check.equal("GetSettings started over gRPC", value(after, "grpc_server_started_total", grpc_method="GetSettings",
                                                       transport="grpc"), 4.0)
    check.equal("GetSettings NOT_FOUND over gRPC", value(after, "grpc_server_handled_total", grpc_method="GetSettings",
                                                         grpc_code="NotFound", transport="grpc"), 1.0)
    check.equal("GetSettings OK over gRPC", value(after, "grpc_server_handled_total", grpc_method="GetSettings",
                                                  grpc_code="OK", transport="grpc"), 1.0)
    check.equal("GetSettings answers sent", value(after, "grpc_server_msg_sent_total", grpc_method="GetSettings",
                                                  transport="grpc"), 1.0)
    check.equal("PublishPrices UNAUTHENTICATED", value(after, "grpc_server_handled_total", grpc_method="PublishPrices",
                                                       grpc_code="Unauthenticated", transport="grpc"), 2.0)
    check.equal("SaveSettings ABORTED", value(after, "grpc_server_handled_total", grpc_method="SaveSettings",
                                              grpc_code="Aborted", transport="grpc"), 1.0)
    check.equal("SaveSettings handled once in the histogram", value(
        after, "grpc_server_handling_seconds_count", grpc_method="SaveSettings", transport="grpc"), 2.0)
    check.true("StreamPrices messages counted", (value(after, "grpc_server_msg_sent_total", grpc_method="StreamPrices",
                                                       transport="grpc") or 0) >= 40)
    check.equal("native calls untouched", value(after, "grpc_server_started_total", grpc_method="GetSettings",
                                                transport="native"), 0.0)
    check.true("an HTTP/2 connection is open", (value(after, "coinwatch_connections_open", transport="http2") or 0) >= 1)
    check.true("price deliveries cover the streams' messages", (value(after, "coinwatch_price_deliveries_total") or 0) >= 40)
    check.equal("one settings save", value(after, "coinwatch_settings_saves_total"), 1.0)
    check.equal("one settings error (the stale version)", value(after, "coinwatch_settings_save_errors_total"), 1.0)
    check.true("journal syncs counted", (value(after, "coinwatch_settings_journal_syncs_total") or 0) >= 1)
    check.true("alert evaluations counted", (value(after, "coinwatch_alert_evaluations_total") or 0) >= 1)
    check.true("no price stream left open", eventually(lambda: value(metrics(options.server), "coinwatch_price_streams") == 0))
    channel.close()
    print(f"grpc interop: {check.count} checks passed")


if __name__ == "__main__":
    main()
