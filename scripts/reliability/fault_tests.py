"""Fault tests against the real coinwatchd binary (see scripts/fault-tests for usage).

Each test starts coinwatchd on 127.0.0.1 port 0 with its own data directory, injects a fault, and checks what
docs/RELIABILITY.md promises. Every wait has a deadline; a test that cannot run here (no tmpfs, not root) says so and
is skipped, which counts as a failure only with --strict.
"""
import argparse
import glob
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import cwwire as w

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def save_request(device, value, symbol="BTC"):
    request = w.pb.SaveSettingsRequest(device_id=device)
    request.set_rules[symbol].below.mantissa = value
    return request


def get_settings(client, device, symbol="BTC"):
    """(version, `symbol`'s below mantissa) of `device`, or None when it has no settings."""
    code, message, response = client.unary(w.GET_SETTINGS, w.pb.GetSettingsRequest(device_id=device),
                                           w.pb.GetSettingsResponse)
    if code == w.rpc.Status.NOT_FOUND:
        return None
    check(code == 0, f"GetSettings({device}) failed: {w.code_name(code)} {message}")
    return response.settings.version, response.settings.rules[symbol].below.mantissa


class Context:
    def __init__(self, binary, work):
        self.binary = binary
        self.work = work
        self.counter = 0

    def directory(self, name):
        self.counter += 1
        path = os.path.join(self.work, f"{self.counter:02d}-{name}")
        os.makedirs(path)
        return path

    def server(self, data, args=(), prefix=None, log=None):
        return w.Server(self.binary, data, ["--feed", "none", *args], log_path=log, prefix=prefix)

    def run(self, args, timeout=60, prefix=()):
        """Runs coinwatchd to completion: (exit status, stdout + stderr)."""
        result = subprocess.run([*prefix, self.binary, *args], capture_output=True, text=True, timeout=timeout)
        return result.returncode, result.stdout + result.stderr


# MARK: kill -9 under load

class LoadClient(threading.Thread):
    """Saves its own device over and over, one request at a time, remembering what was acknowledged."""

    def __init__(self, port, device, round_number, stop):
        super().__init__(daemon=True)
        self.port, self.device, self.round_number, self.stop = port, device, round_number, stop
        self.acked = None       # (version, value) of the last acknowledged save
        self.in_flight = None   # value of the save sent and not answered
        self.count = 0
        self.error = None

    def run(self):
        try:
            client = w.Client(self.port, timeout=10)
        except OSError:
            return
        sequence = 0
        while not self.stop.is_set():
            sequence += 1
            value = self.round_number * 1_000_000 + sequence
            self.in_flight = value
            try:
                code, message, response = client.unary(w.SAVE_SETTINGS, save_request(self.device, value),
                                                       w.pb.SaveSettingsResponse)
            except (OSError, w.ProtocolError, socket.timeout):
                break
            if code != 0:
                self.error = f"{w.code_name(code)}: {message}"
                break
            self.acked = (response.settings.version, response.settings.rules["BTC"].below.mantissa)
            self.in_flight = None
            self.count += 1
        client.close()


def crash_under_load(ctx, rounds, clients):
    data = ctx.directory("crash")
    log = os.path.join(data, "..", "crash.log")
    known = {}  # device -> (version, value) verified after the last restart
    devices = [f"crash-{index:02d}" for index in range(clients)]
    server = ctx.server(os.path.join(data, "store"), log=log)
    check(server.port, "coinwatchd did not start")
    totals = {"acked": 0, "in_flight_applied": 0, "in_flight_dropped": 0}
    try:
        for round_number in range(1, rounds + 1):
            stop = threading.Event()
            workers = [LoadClient(server.port, device, round_number, stop) for device in devices]
            for worker in workers:
                worker.start()
            # Kill only once the load is running (a busy machine may take a while to connect 50 clients), then at a
            # random point of it.
            deadline = time.monotonic() + 120
            while sum(worker.count for worker in workers) == 0 and time.monotonic() < deadline:
                if any(worker.error for worker in workers):
                    break
                time.sleep(0.02)
            time.sleep(random.uniform(0.3, 1.5))
            server.process.send_signal(signal.SIGKILL)
            server.process.wait(timeout=10)
            server.log.close()
            stop.set()
            for worker in workers:
                worker.join(timeout=30)
                check(not worker.is_alive(), f"load client {worker.device} hung after the kill")
                check(worker.error is None, f"{worker.device}: a save failed before the kill: {worker.error}")
            acked = sum(worker.count for worker in workers)
            check(acked > 0, f"round {round_number}: no save was acknowledged before the kill")
            totals["acked"] += acked

            server = ctx.server(os.path.join(data, "store"), log=log)
            check(server.port, f"round {round_number}: coinwatchd did not start after kill -9: {tail(log)}")
            client = w.Client(server.port)
            for worker in workers:
                stored = get_settings(client, worker.device)
                base = worker.acked if worker.acked is not None else known.get(worker.device)
                allowed = [base]
                if worker.in_flight is not None:
                    allowed.append(((base[0] if base else 0) + 1, worker.in_flight))
                check(stored in allowed, f"round {round_number}: {worker.device} holds {stored} after kill -9; "
                      f"acknowledged {base}, in flight {worker.in_flight}")
                if worker.in_flight is not None:
                    totals["in_flight_applied" if stored != base else "in_flight_dropped"] += 1
                known[worker.device] = stored
            client.close()
            print(f"  round {round_number}: {acked} saves acknowledged before kill -9, all present after restart",
                  flush=True)
    finally:
        server.kill()
    return (f"kill -9 under load: {rounds} rounds x {clients} clients, {totals['acked']} acknowledged saves, "
            f"none lost; unanswered saves found applied {totals['in_flight_applied']}, "
            f"not applied {totals['in_flight_dropped']}")


# MARK: damaged store

DAMAGES = ["truncate-table", "garble-table", "garble-manifest", "truncate-manifest"]


def make_store(ctx, devices, tables=3):
    """A store holding `devices` devices spread over `tables` table files (each reopen turns the log into one)."""
    data = ctx.directory("pristine")
    store = os.path.join(data, "store")
    per_table = -(-devices // tables)
    for first in range(0, devices, per_table):
        server = ctx.server(store)
        client = w.Client(server.port)
        for index in range(first, min(devices, first + per_table)):
            code, message, _ = client.unary(w.SAVE_SETTINGS, save_request(f"dev-{index:03d}", 1000 + index))
            check(code == 0, f"save failed: {message}")
        client.close()
        check(server.stop() == 0, "coinwatchd did not stop cleanly")
    server = ctx.server(store)
    check(server.stop() == 0, "coinwatchd did not stop cleanly")
    found = glob.glob(os.path.join(store, "*.ldb"))
    check(len(found) >= 2, f"expected several table files in {os.listdir(store)}")
    return store


def damage(store, kind):
    tables = sorted(glob.glob(os.path.join(store, "*.ldb")), key=os.path.getsize, reverse=True)
    manifest = sorted(glob.glob(os.path.join(store, "MANIFEST-*")))[-1]
    if kind == "truncate-table":
        os.truncate(tables[0], os.path.getsize(tables[0]) // 2)
    elif kind == "garble-table":
        with open(tables[0], "r+b") as table:
            size = os.path.getsize(tables[0])
            table.seek(size // 3)
            table.write(bytes(random.Random(7).randrange(256) for _ in range(max(64, size // 10))))
    elif kind == "garble-manifest":
        with open(manifest, "r+b") as file:
            file.write(b"\xde\xad\xbe\xef" * 64)
    elif kind == "truncate-manifest":
        os.truncate(manifest, 10)


def damaged_store(ctx, kinds, devices=300):
    pristine = make_store(ctx, devices)
    lines = []
    for kind in kinds:
        store = os.path.join(ctx.directory(kind), "store")
        shutil.copytree(pristine, store)
        damage(store, kind)
        status, output = ctx.run(["--listen", "127.0.0.1:0", "--data", store, "--feed", "none"], timeout=60)
        check(status != 0, f"{kind}: coinwatchd started on a damaged store")
        check(f"coinwatchd repair --data {store}" in output,
              f"{kind}: the refusal does not point at 'coinwatchd repair': {output.strip()[-400:]}")
        status, output = ctx.run(["repair", "--data", store], timeout=120)
        check(status == 0 and "repaired" in output, f"{kind}: repair failed ({status}): {output.strip()[-400:]}")
        server = ctx.server(store)
        check(server.port, f"{kind}: coinwatchd did not start after repair")
        client = w.Client(server.port)
        recovered = 0
        for index in range(devices):
            stored = get_settings(client, f"dev-{index:03d}")
            if stored is not None:
                check(stored == (1, 1000 + index), f"{kind}: dev-{index:03d} came back as {stored}")
                recovered += 1
        client.close()
        check(server.stop() == 0, f"{kind}: coinwatchd did not stop cleanly after repair")
        lines.append(f"{kind}: refused with a pointer to repair; repair kept {recovered}/{devices} devices, "
                     "each intact")
        print(f"  {lines[-1]}", flush=True)
    return "damaged store: " + "; ".join(lines)


# MARK: disk full

def mount_tmpfs(path, size):
    if os.geteuid() != 0:
        return "not root"
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], capture_output=True,
                            text=True)
    return None if result.returncode == 0 else result.stderr.strip()


def fill(path):
    """Fills the file system holding `path` (unbuffered, so nothing is left to fail at close); returns the filler."""
    filler = os.path.join(path, "filler")
    for name, chunk in ((filler, 65536), (filler + "-tail", 512)):
        with open(name, "wb", buffering=0) as out:
            try:
                while True:
                    out.write(b"\0" * chunk)
            except OSError:
                pass
    return filler


def disk_full(ctx, devices=50):
    mount = ctx.directory("tmpfs")
    reason = mount_tmpfs(mount, "16m")
    if reason:
        return None, f"disk full: skipped (cannot mount a tmpfs: {reason})"
    server = None
    try:
        store = os.path.join(mount, "store")
        server = ctx.server(store, log=os.path.join(ctx.work, "disk-full.log"))
        client = w.Client(server.port)
        acked = {}
        for index in range(devices):
            code, message, _ = client.unary(w.SAVE_SETTINGS, save_request(f"full-{index:02d}", 100 + index))
            check(code == 0, f"save before the disk filled up failed: {message}")
            acked[f"full-{index:02d}"] = 100 + index
        filler = fill(mount)

        refusals = {}
        for index in range(devices):
            code, message, _ = client.unary(w.SAVE_SETTINGS, save_request(f"full-{index:02d}", 200 + index))
            if code == 0:
                acked[f"full-{index:02d}"] = 200 + index
                continue
            check(code in (w.rpc.Status.RESOURCE_EXHAUSTED, w.rpc.Status.UNAVAILABLE) and message,
                  f"a save on a full disk failed with {w.code_name(code)} '{message}'")
            refusals[w.code_name(code)] = refusals.get(w.code_name(code), 0) + 1
            sample = message
        check(refusals, "no save failed although the disk is full")
        check("No space left on device" in sample, f"the refusal does not give the reason: {sample}")
        for device, value in acked.items():
            stored = get_settings(client, device)
            check(stored is not None and stored[1] == value, f"read of {device} on a full disk gave {stored}")
        code, _, health = client.unary(w.HEALTH_CHECK, w.pb.HealthCheckRequest(), w.pb.HealthCheckResponse)
        check(code == 0, "Health/Check failed on a full disk")

        os.remove(filler)
        os.remove(filler + "-tail")
        recovered_after = None
        # Bounded polling, generous for a busy machine: the point is that saves recover, not how fast.
        for attempt in range(1, 241):
            code, message, _ = client.unary(w.SAVE_SETTINGS, save_request("full-00", 300))
            if code == 0:
                acked["full-00"] = 300
                recovered_after = attempt
                break
            time.sleep(0.25)
        check(recovered_after is not None, f"saves still fail after space returned: {message}")
        for index in range(1, devices):
            code, message, _ = client.unary(w.SAVE_SETTINGS, save_request(f"full-{index:02d}", 300 + index))
            check(code == 0, f"a save after space returned failed: {message}")
            acked[f"full-{index:02d}"] = 300 + index
        client.close()
        # kill -9, not a clean stop: a clean stop checkpoints the journal, and what must hold is that every save
        # acknowledged around the episode is in the journal and replayed from it.
        server.kill()
        server = ctx.server(store, log=os.path.join(ctx.work, "disk-full.log"))
        check(server.port, "coinwatchd did not restart after the disk-full episode")
        client = w.Client(server.port)
        for device, value in acked.items():
            stored = get_settings(client, device)
            check(stored is not None and stored[1] == value,
                  f"after restart {device} holds {stored}, but {value} was acknowledged")
        client.close()
        server.stop()
        server = None
        counts = ", ".join(f"{count} {code}" for code, count in sorted(refusals.items()))
        return True, (f"disk full (16 MiB tmpfs): {counts} with '{sample[:90]}…'; reads and Health/Check kept "
                      f"working; saves succeeded again at attempt {recovered_after} after space returned; all "
                      f"{len(acked)} acknowledged values present after kill -9 and restart")
    finally:
        if server is not None:
            server.kill()
        subprocess.run(["umount", mount], capture_output=True)


# MARK: unwritable data directory

def can_run_as_nobody(binary):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    return subprocess.run([*NOBODY, binary, "--version"], capture_output=True).returncode == 0


def unwritable_directory(ctx, big_saves):
    if not can_run_as_nobody(ctx.binary):
        return None, "unwritable directory: skipped (needs root and setpriv to run coinwatchd as nobody)"
    base = ctx.directory("unwritable")
    # 1. A data directory the user cannot write: refused at startup with the reason.
    locked = os.path.join(base, "root-owned")
    os.makedirs(locked)
    os.chmod(base, 0o755)
    status, output = ctx.run(["--listen", "127.0.0.1:0", "--data", locked, "--feed", "none"], prefix=NOBODY)
    check(status != 0, "coinwatchd started as nobody on a directory it cannot write")
    check("Permission denied" in output and locked in output, f"unclear refusal: {output.strip()[-300:]}")
    lines = [f"startup on a directory it cannot write: refused ('{output.strip().splitlines()[-1][:100]}…')"]
    if not big_saves:
        return True, "unwritable directory: " + "; ".join(lines)

    # 2. The directory becomes read-only while serving: the open log keeps taking writes; when LevelDB needs a new
    #    file (the memtable is full) the save fails with the reason, reads go on, and saves resume once it is
    #    writable again.
    owned = os.path.join(base, "nobody-owned")
    os.makedirs(owned)
    os.chown(owned, 65534, 65534)
    store = os.path.join(owned, "store")
    log = os.path.join(base, "coinwatchd.log")
    server = ctx.server(store, prefix=NOBODY, log=log)
    check(server.port, f"coinwatchd did not start as nobody: {tail(log)}")
    try:
        client = w.Client(server.port)
        symbols = [f"S{index:03d}" for index in range(60)]
        acked = {}
        failure = None
        saves = 0
        os.chmod(store, 0o555)
        for index in range(20000):
            device = f"big-{index % 500:03d}"
            request = w.pb.SaveSettingsRequest(device_id=device)
            for number, symbol in enumerate(symbols):
                request.set_rules[symbol].below.mantissa = index * 100 + number + 1
            code, message, _ = client.unary(w.SAVE_SETTINGS, request)
            if code != 0:
                failure = (code, message)
                break
            acked[device] = index * 100 + 1
            saves += 1
        check(failure is not None, "20,000 large saves into a read-only directory all succeeded")
        code, message = failure
        check(code in (w.rpc.Status.UNAVAILABLE, w.rpc.Status.RESOURCE_EXHAUSTED) and "Permission denied" in message,
              f"a save into a read-only directory failed with {w.code_name(code)} '{message}'")
        for device, value in list(acked.items())[:50]:
            stored = get_settings(client, device, "S000")
            check(stored is not None and stored[1] == value, f"read of {device} gave {stored}, not {value}")
        os.chmod(store, 0o755)
        code, message, _ = client.unary(w.SAVE_SETTINGS, save_request("big-000", 7, "S000"))
        check(code == 0, f"a save after the directory became writable again failed: {message}")
        acked["big-000"] = 7
        client.close()
        check(server.stop() == 0, "coinwatchd did not stop cleanly")
        server = ctx.server(store, prefix=NOBODY, log=log)
        client = w.Client(server.port)
        for device, value in acked.items():
            stored = get_settings(client, device, "S000")
            check(stored is not None and stored[1] == value, f"after restart {device} holds {stored}, not {value}")
        client.close()
        lines.append(f"read-only while serving: {saves} saves succeeded until LevelDB needed a new file, then "
                     f"{w.code_name(failure[0])} '{failure[1][:100]}…'; reads went on; saves resumed once "
                     "writable; all acknowledged values present after restart")
        return True, "unwritable directory: " + "; ".join(lines)
    finally:
        server.kill()


# MARK: second instance

def second_instance(ctx):
    data = os.path.join(ctx.directory("second"), "store")
    first = ctx.server(data)
    try:
        check(first.port, "the first coinwatchd did not start")
        status, output = ctx.run(["--listen", "127.0.0.1:0", "--data", data, "--feed", "none"], timeout=30)
        check(status != 0, "a second coinwatchd started on the same data directory")
        check("in use by another coinwatchd" in output, f"unclear refusal: {output.strip()[-300:]}")
        client = w.Client(first.port)
        code, _, _ = client.unary(w.HEALTH_CHECK, w.pb.HealthCheckRequest())
        check(code == 0, "the first coinwatchd stopped serving")
        client.close()
        return f"second instance: refused ('{output.strip().splitlines()[-1][:110]}'); the first kept serving"
    finally:
        first.kill()


def tail(path, lines=5):
    try:
        with open(path, errors="replace") as log:
            return " | ".join(log.read().strip().splitlines()[-lines:])
    except OSError:
        return ""


def main():
    parser = argparse.ArgumentParser(description="CoinWatch fault tests")
    parser.add_argument("mode", choices=["quick", "full"], nargs="?", default="quick")
    parser.add_argument("--binary", required=True)
    parser.add_argument("--rounds", type=int, help="kill -9 rounds (quick 3, full 20)")
    parser.add_argument("--strict", action="store_true", help="a skipped test fails the run")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    random.seed(seed)
    full = args.mode == "full"
    rounds = args.rounds or (20 if full else 3)
    work = tempfile.mkdtemp(prefix="coinwatch-fault.")
    os.chmod(work, 0o755)
    ctx = Context(args.binary, work)
    print(f"fault tests ({args.mode}, seed {seed}), work directory {work}", flush=True)
    tests = [
        ("kill -9 under load", lambda: (True, crash_under_load(ctx, rounds, 50))),
        ("damaged store", lambda: (True, damaged_store(ctx, DAMAGES if full else DAMAGES[:2]))),
        ("disk full", lambda: disk_full(ctx)),
        ("unwritable directory", lambda: unwritable_directory(ctx, big_saves=full)),
        ("second instance", lambda: (True, second_instance(ctx))),
    ]
    failed = skipped = 0
    summary = []
    for name, test in tests:
        started = time.monotonic()
        print(f"{name}:", flush=True)
        try:
            ran, line = test()
        except Failure as failure:
            failed += 1
            summary.append(f"FAILED {name}: {failure}")
            print(f"  FAILED: {failure}", flush=True)
            continue
        except Exception as error:  # a crash of the driver is a failure too, with its reason
            failed += 1
            summary.append(f"FAILED {name}: {type(error).__name__}: {error}")
            print(f"  FAILED: {type(error).__name__}: {error}", flush=True)
            continue
        if ran is None:
            skipped += 1
        summary.append(f"{line} ({time.monotonic() - started:.1f} s)")
        print(f"  {summary[-1]}", flush=True)
    print("\nsummary:\n  " + "\n  ".join(summary))
    if failed or (skipped and args.strict):
        print(f"fault tests: {failed} failed, {skipped} skipped; work directory kept: {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print(f"fault tests: all passed ({skipped} skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
