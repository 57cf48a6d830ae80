"""Abuse tests against the real coinwatchd (see scripts/abuse-tests for usage).

While abusive peers do their worst, one after the other, a well-behaved client keeps calling GetSettings (and
SaveSettings every tenth call) and reading a price stream, timing every call. Each abuser must get the response
docs/PROTOCOL.md documents, the well-behaved client must keep being served, and the server's resident memory
(VmRSS in /proc/<pid>/status, sampled every 50 ms) must stay under the bound given with --rss-bound-mib.
"""
import argparse
import os
import selectors
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time

import cwwire as w

# The well-behaved client's deadline per call (and the longest gap it accepts between stream updates). Being served
# is what is checked, not how fast: the latencies are reported, and a busy machine must not fail the run.
CALL_DEADLINE_MS = 30_000


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Phase:
    """The name of the phase running now, shared with the measuring threads."""

    def __init__(self):
        self.name = "baseline"
        self.lock = threading.Lock()

    def get(self):
        with self.lock:
            return self.name

    def set(self, name):
        with self.lock:
            self.name = name


class RSSSampler(threading.Thread):
    def __init__(self, server, phase):
        super().__init__(daemon=True)
        self.server, self.phase = server, phase
        self.peak = {}
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                rss = self.server.rss_kib()
            except OSError:
                return
            name = self.phase.get()
            self.peak[name] = max(self.peak.get(name, 0), rss)
            time.sleep(0.05)


class GoodClient(threading.Thread):
    """Times GetSettings (and a durable SaveSettings every tenth call) in a loop, about 200 calls a second."""

    def __init__(self, port, phase):
        super().__init__(daemon=True)
        self.port, self.phase = port, phase
        self.latencies = {}
        self.errors = []
        self.stop = threading.Event()

    def run(self):
        try:
            client = w.Client(self.port, name="well-behaved")
            request = w.pb.SaveSettingsRequest(device_id="well-behaved")
            request.set_rules["BTC"].above.mantissa = 1
            code, message, _ = client.unary(w.SAVE_SETTINGS, request)
            if code != 0:
                raise Failure(f"first save failed: {message}")
            count = 0
            while not self.stop.is_set():
                count += 1
                started = time.monotonic()
                if count % 10 == 0:
                    request.set_rules["BTC"].above.mantissa = count
                    code, message, _ = client.unary(w.SAVE_SETTINGS, request, timeout_ms=CALL_DEADLINE_MS)
                else:
                    code, message, _ = client.unary(w.GET_SETTINGS, w.pb.GetSettingsRequest(device_id="well-behaved"),
                                                    timeout_ms=CALL_DEADLINE_MS)
                elapsed = time.monotonic() - started
                if code != 0:
                    self.errors.append(f"{self.phase.get()}: {w.code_name(code)} {message}")
                self.latencies.setdefault(self.phase.get(), []).append(elapsed)
                time.sleep(0.005)
            client.close()
        except Exception as error:
            self.errors.append(f"{self.phase.get()}: {type(error).__name__}: {error}")


class GoodStream(threading.Thread):
    """Reads a StreamPrices call for BTC and counts the updates per phase."""

    def __init__(self, port, phase):
        super().__init__(daemon=True)
        self.port, self.phase = port, phase
        self.updates = {}
        self.errors = []
        self.stop = threading.Event()

    def run(self):
        try:
            client = w.Client(self.port, name="well-behaved-stream")
            call_id = client.start(w.STREAM_PRICES, w.pb.StreamPricesRequest(symbols=["BTC"]))
            while not self.stop.is_set():
                frame = client.receive(timeout=CALL_DEADLINE_MS / 1000)
                kind = frame.WhichOneof("kind")
                if kind == "message" and frame.message.call_id == call_id:
                    name = self.phase.get()
                    self.updates[name] = self.updates.get(name, 0) + 1
                elif kind in ("end", "error", "go_away"):
                    self.errors.append(f"{self.phase.get()}: the stream got {frame}")
                    return
            client.close()
        except Exception as error:
            self.errors.append(f"{self.phase.get()}: {type(error).__name__}: {error}")


def wait_until(condition, timeout):
    """Polls `condition` until it holds or `timeout` seconds pass; returns whether it held."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def served_during(name, good, stream, need_update):
    """Waits (bounded) until the well-behaved client has finished a call, and its stream received an update, during
    phase `name` (or one of them failed): a phase ends on that condition rather than after a fixed pause."""
    return wait_until(lambda: good.errors or stream.errors or (
        good.latencies.get(name) and (not need_update or stream.updates.get(name, 0) > 0)), 120)


def connect(port, receive_buffer=None):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect(("127.0.0.1", port))
    return sock


def read_all_until_closed(sockets, timeout):
    """Reads every socket until the server closes it; returns {socket: bytes}; fails past `timeout`."""
    selector = selectors.DefaultSelector()
    data = {}
    for sock in sockets:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
        data[sock] = b""
    open_count = len(sockets)
    deadline = time.monotonic() + timeout
    while open_count:
        remaining = deadline - time.monotonic()
        check(remaining > 0, f"{open_count} of {len(sockets)} connections still open after {timeout:.0f} s")
        for key, _ in selector.select(min(remaining, 1.0)):
            try:
                chunk = key.fileobj.recv(65536)
            except (ConnectionResetError, BlockingIOError) as error:
                chunk = b"" if isinstance(error, ConnectionResetError) else None
            if chunk is None:
                continue
            if chunk:
                data[key.fileobj] += chunk
            else:
                selector.unregister(key.fileobj)
                open_count -= 1
    selector.close()
    for sock in sockets:
        sock.close()
    return data


def expect_connection_error(data, code, fragment, what):
    """Every byte string must be whole frames ending in one ConnectionError with `code` and `fragment`."""
    for output in data.values():
        frames = w.split_frames(output)
        check(frames, f"{what}: the server closed without a ConnectionError")
        last = frames[-1]
        check(last.WhichOneof("kind") == "error", f"{what}: the last frame is {last}")
        check(last.error.code == code and fragment in last.error.message,
              f"{what}: got {w.code_name(last.error.code)} '{last.error.message}'")
    sample = w.split_frames(next(iter(data.values())))[-1].error
    return f"ConnectionError {w.code_name(sample.code)} '{sample.message}'"


# MARK: The abusers

def silent_connections(ctx, count=1000):
    sockets = [connect(ctx.port) for _ in range(count)]
    time.sleep(1.0)
    rss = ctx.server.rss_kib()
    data = read_all_until_closed(sockets, ctx.handshake_timeout + 30)
    response = expect_connection_error(data, w.rpc.Status.DEADLINE_EXCEEDED, "no Hello within", "silent connection")
    return (f"{count} connections, nothing sent: each got {response} after the handshake timeout, then close; "
            f"server RSS with all {count} open {rss / 1024:.1f} MiB")


def dribblers(ctx, count=20):
    complete = w.hello("dribbler") + w.call(1, w.HEALTH_CHECK, w.pb.HealthCheckRequest())
    finishing = [connect(ctx.port) for _ in range(count)]
    # The first 1,004 bytes of a 1,000,000-byte Hello that never completes: the server holds only what arrived.
    stalled_bytes = struct.pack(">I", 1_000_000) + b"\x0a" * 1000
    stalled = [connect(ctx.port) for _ in range(count)]
    # Byte by byte, but done within half the handshake timeout: on a busy machine the pauses grow, and a stalled peer
    # still writing when the server closes it would get a reset instead of the ConnectionError checked below. What
    # is left at half time goes in one write.
    started = time.monotonic()
    for index in range(max(len(complete), len(stalled_bytes))):
        late = time.monotonic() - started > ctx.handshake_timeout / 2
        for sock in finishing:
            if index < len(complete):
                sock.send(complete[index:] if late else complete[index:index + 1])
        for sock in stalled:
            if index < len(stalled_bytes):
                sock.send(stalled_bytes[index:] if late else stalled_bytes[index:index + 1])
        if late:
            break
        time.sleep(0.001)
    served = 0
    for sock in finishing:
        client = w.Client.__new__(w.Client)
        client.sock, client.buffer, client.timeout = sock, b"", 10
        welcome, end = client.receive(), client.receive()
        check(welcome.WhichOneof("kind") == "welcome", f"a dribbled Hello got {welcome}")
        check(end.WhichOneof("kind") == "end" and end.end.status.code == 0, f"a dribbled call got {end}")
        served += 1
        sock.close()
    data = read_all_until_closed(stalled, ctx.handshake_timeout + 30)
    response = expect_connection_error(data, w.rpc.Status.DEADLINE_EXCEEDED, "no Hello within", "stalled frame")
    return (f"{count} peers dribbling Hello + Call one byte per write: all {served} served; {count} peers "
            f"dribbling the first 1,004 bytes of a 1,000,000-byte Hello and stopping: {response}")


def oversize_prefixes(ctx, count=100):
    fresh = [connect(ctx.port) for _ in range(count)]
    after_hello = [connect(ctx.port) for _ in range(count)]
    zero = [connect(ctx.port) for _ in range(count)]
    for sock in fresh:
        sock.sendall(struct.pack(">I", 0x7FFF_FFFF))
    for sock in after_hello:
        sock.sendall(w.hello() + struct.pack(">I", 4 * 1024 * 1024 + 1))
    for sock in zero:
        sock.sendall(w.hello() + struct.pack(">I", 0))
    first = expect_connection_error(read_all_until_closed(fresh, 30), w.rpc.Status.RESOURCE_EXHAUSTED,
                                    "exceeds the limit", "oversize prefix")
    second = expect_connection_error(read_all_until_closed(after_hello, 30), w.rpc.Status.RESOURCE_EXHAUSTED,
                                     "exceeds the limit of 4194304", "limit + 1 after Hello")
    third = expect_connection_error(read_all_until_closed(zero, 30), w.rpc.Status.INVALID_ARGUMENT,
                                    "frame length 0", "zero length")
    return (f"{count} x a 2 GiB prefix: {first}; {count} x limit + 1 after Hello: {second}; "
            f"{count} x length 0: {third}")


def http_requests(ctx, count=100):
    """HTTP on the RPC port is served as HTTP (docs/ARCHITECTURE.md, "One port, three ways in"): each request
    gets its HTTP answer and the connection closes when the request asks for it, the parser refuses it, or an
    HTTP/2 client goes away."""
    h2_bye = struct.pack(">I", 8)[1:] + bytes([7, 0]) + b"\0\0\0\0" + b"\0\0\0\0\0\0\0\0"  # GOAWAY(NO_ERROR)
    requests = [
        (b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", b"HTTP/1.1 200 "),       # the dashboard
        (b"POST /v1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", b"HTTP/1.1 400 "),                 # no Host
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(3) + bytes([4, 0]) + bytes(4) + h2_bye,     # SETTINGS first
         b"\0\0"),
        (b"OPTIONS * HTTP/1.1\r\n\r\n", b"HTTP/1.1 400 "),
    ]
    sockets = []
    for index in range(count):
        sock = connect(ctx.port)
        sock.sendall(requests[index % len(requests)][0])
        sockets.append(sock)
    data = read_all_until_closed(sockets, 30)
    for index, sock in enumerate(sockets):
        output, expected = data[sock], requests[index % len(requests)][1]
        check(output.startswith(expected), f"HTTP request {index % len(requests)} got {output[:120]!r}")
        if expected == b"\0\0":
            check(len(output) >= 9 and output[3] == 4, f"an HTTP/2 client got {output[:40]!r}, not SETTINGS first")
    return f"{count} HTTP/1.1 and HTTP/2 requests: each got its HTTP answer, then close"


def ping_flood(ctx, count=20, pings=1000):
    sockets = [connect(ctx.port) for _ in range(count)]
    for sock in sockets:
        sock.sendall(w.hello("pinger") + w.ping(b"x" * 8) * pings)
    data = read_all_until_closed(sockets, 30)
    pongs = []
    for output in data.values():
        frames = w.split_frames(output)
        kinds = [frame.WhichOneof("kind") for frame in frames]
        check(kinds[0] == "welcome" and kinds[-1] == "go_away", f"a ping flood got {kinds[:3]}…{kinds[-3:]}")
        away = frames[-1].go_away
        check(away.code == w.rpc.Status.RESOURCE_EXHAUSTED and away.reason == "too many pings", f"got {away}")
        pongs.append(kinds.count("pong"))
    return (f"{count} peers x {pings} pings in one burst: {min(pongs)}-{max(pongs)} Pongs each, then "
            f"GoAway RESOURCE_EXHAUSTED 'too many pings', then close")


def cancelled_streams(ctx, count=10_000):
    client = w.Client(ctx.port, name="canceller", timeout=60)
    request = w.pb.StreamPricesRequest(symbols=["BTC", "ETH"]).SerializeToString()
    ends = {}
    reader_error = []

    def read():
        try:
            while len(ends) < count:
                frame = client.receive(timeout=60)
                if frame.WhichOneof("kind") == "end":
                    ends[frame.end.call_id] = ends.get(frame.end.call_id, []) + [frame.end.status.code]
                elif frame.WhichOneof("kind") in ("error", "go_away"):
                    reader_error.append(str(frame))
                    return
        except Exception as error:
            reader_error.append(f"{type(error).__name__}: {error}")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    batch = []
    for call_id in range(1, count + 1):
        batch.append(w.call(call_id, w.STREAM_PRICES, request) + w.cancel(call_id))
        if len(batch) == 500:
            client.send(b"".join(batch))
            batch = []
    if batch:
        client.send(b"".join(batch))
    reader.join(timeout=120)
    check(not reader.is_alive() and not reader_error, f"cancelled streams: {reader_error or 'reader hung'}")
    check(len(ends) == count, f"{len(ends)} of {count} cancelled streams ended")
    codes = {}
    for call_id, statuses in ends.items():
        check(len(statuses) == 1, f"call {call_id} ended {len(statuses)} times")
        codes[w.code_name(statuses[0])] = codes.get(w.code_name(statuses[0]), 0) + 1
    check(set(codes) == {"CANCELLED"}, f"cancelled streams ended {codes}")
    code, _, _ = client.unary(w.HEALTH_CHECK, w.pb.HealthCheckRequest())
    check(code == 0, "the connection stopped serving after the cancelled streams")
    client.close()
    return (f"{count} StreamPrices calls each cancelled at once on one connection: exactly one End CANCELLED "
            "each; the connection kept serving")


def never_reading_subscribers(ctx, count=10):
    sockets = []
    for _ in range(count):
        sock = connect(ctx.port, receive_buffer=4096)
        # Sixteen streams of every symbol fill the socket buffers (which grow to a few MiB) within seconds.
        sock.sendall(w.hello("never-reads") + b"".join(
            w.call(call_id, w.STREAM_PRICES, w.pb.StreamPricesRequest()) for call_id in range(1, 17)))
        sockets.append(sock)
    ports = {f"127.0.0.1:{sock.getsockname()[1]}" for sock in sockets}
    started = time.monotonic()
    # Nothing is read until the server has given up on every one of them; with the window closed its FIN cannot
    # arrive either, so its log says when it closed each.
    deadline = started + ctx.slow_consumer_timeout + 60
    peak = 0
    closed = set()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        peak = max(peak, ctx.server.rss_kib())
        with open(ctx.server.log_path, errors="replace") as log:
            closed = {peer for line in log if "closing slow consumer" in line
                      for peer in ports if f"peer={peer} " in line + " "}
        if len(closed) == count:
            break
    elapsed = time.monotonic() - started
    check(len(closed) == count, f"{count - len(closed)} never-reading subscribers still open after {elapsed:.0f} s")
    data = read_all_until_closed(sockets, 30)
    received = []
    for output in data.values():
        frames, cut = split_prefix(output)
        kinds = [frame.WhichOneof("kind") for frame in frames]
        received.append((len(output), kinds[-1] if kinds else "nothing", cut))
    last = sorted({kind for _, kind, _ in received})
    return (f"{count} connections with 16 StreamPrices calls each that never read (4 KiB receive buffer): the "
            f"server logged "
            f"'closing slow consumer' for each {elapsed:.0f} s after they subscribed (slow-consumer timeout "
            f"{ctx.slow_consumer_timeout:.0f} s) and closed them; read afterwards, each held "
            f"{min(r[0] for r in received) // 1024}-{max(r[0] for r in received) // 1024} KiB ending in {last} "
            f"(the ConnectionError queued behind the unread output is dropped with it); server RSS peak meanwhile "
            f"{peak / 1024:.1f} MiB")


def split_prefix(output):
    """The whole frames at the start of `output`, and how many bytes were left over (a frame cut by the close)."""
    frames, offset = [], 0
    while len(output) - offset >= 4:
        (length,) = struct.unpack(">I", output[offset:offset + 4])
        if len(output) - offset - 4 < length:
            break
        frame = w.rpc.Frame()
        frame.ParseFromString(output[offset + 4:offset + 4 + length])
        frames.append(frame)
        offset += 4 + length
    return frames, len(output) - offset


class Context:
    def __init__(self, server, handshake_timeout, slow_consumer_timeout):
        self.server = server
        self.port = server.port
        self.handshake_timeout = handshake_timeout
        self.slow_consumer_timeout = slow_consumer_timeout


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description="CoinWatch abuse tests")
    parser.add_argument("--binary", required=True)
    parser.add_argument("--rss-bound-mib", type=float, default=128)
    parser.add_argument("--quick", action="store_true", help="fewer abusers of each kind")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="coinwatch-abuse.")
    handshake, slow = 5, 5
    server = w.Server(args.binary, os.path.join(work, "store"), [
        "--feed", "sim@200", "--handshake-timeout", f"{handshake}s", "--slow-consumer-timeout", f"{slow}s"],
        log_path=os.path.join(work, "coinwatchd.log"))
    check(server.port, "coinwatchd did not start")
    phase = Phase()
    sampler = RSSSampler(server, phase)
    good = GoodClient(server.port, phase)
    stream = GoodStream(server.port, phase)
    for thread in (sampler, good, stream):
        thread.start()
    ctx = Context(server, handshake, slow)
    scale = 0.2 if args.quick else 1.0
    abusers = [
        ("silent connections", lambda: silent_connections(ctx, int(1000 * scale))),
        ("dribbled frames", lambda: dribblers(ctx, int(20 * scale))),
        ("oversize length prefixes", lambda: oversize_prefixes(ctx, int(100 * scale))),
        ("HTTP requests", lambda: http_requests(ctx, int(100 * scale))),
        ("ping flood", lambda: ping_flood(ctx, int(20 * scale))),
        ("cancelled streams", lambda: cancelled_streams(ctx, int(10_000 * scale))),
        ("never-reading subscribers", lambda: never_reading_subscribers(ctx, int(10 * scale))),
    ]
    results, failures = [], []
    served_during("baseline", good, stream, need_update=False)
    for name, run in abusers:
        phase.set(name)
        started = time.monotonic()
        print(f"{name}:", flush=True)
        try:
            line = run()
            results.append((name, line, time.monotonic() - started))
            print(f"  {line}", flush=True)
        except Exception as error:
            failures.append(f"{name}: {type(error).__name__}: {error}")
            print(f"  FAILED: {type(error).__name__}: {error}", flush=True)
        served_during(name, good, stream, need_update=True)
    phase.set("after")
    served_during("after", good, stream, need_update=False)
    for thread in (good, stream, sampler):
        thread.stop.set()
    good.join(timeout=15)
    stream.join(timeout=15)
    sampler.join(timeout=5)
    status = server.stop()
    if status != 0:
        failures.append(f"coinwatchd exited {status} on SIGTERM")
    failures += [f"well-behaved client: {error}" for error in good.errors]
    failures += [f"well-behaved stream: {error}" for error in stream.errors]

    print("\nwell-behaved client, per phase: calls, latency p50 / p99 / max (ms), stream updates, server RSS peak")
    peak = 0
    for name in ["baseline"] + [name for name, _ in abusers] + ["after"]:
        latencies = good.latencies.get(name, [])
        rss = sampler.peak.get(name, 0)
        peak = max(peak, rss)
        if not latencies:
            failures.append(f"the well-behaved client made no call during '{name}'")
            continue
        updates = stream.updates.get(name, 0)
        if updates == 0 and name not in ("baseline", "after"):
            failures.append(f"the well-behaved stream got no update during '{name}'")
        print(f"  {name:26} {len(latencies):6} calls  {percentile(latencies, 0.5) * 1000:7.2f} / "
              f"{percentile(latencies, 0.99) * 1000:7.2f} / {max(latencies) * 1000:7.2f} ms  {updates:6} updates  "
              f"{rss / 1024:6.1f} MiB")
    if peak / 1024 > args.rss_bound_mib:
        failures.append(f"server RSS peaked at {peak / 1024:.1f} MiB, above the bound of {args.rss_bound_mib} MiB")
    print(f"server RSS peak {peak / 1024:.1f} MiB (bound {args.rss_bound_mib:.0f} MiB)")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        print(f"work directory kept: {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("abuse tests: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
