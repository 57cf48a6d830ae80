#!/usr/bin/env python3
"""The dashboard served by a real coinwatchd, in a real browser (Debian's chromium, headless, Playwright), with
the CLI on the other side: prices published with `coinwatch publish` appear and change, a threshold saved in the
page reads back with `coinwatch settings get` and a save from the CLI shows in the page, and a killed and
restarted server makes the page show reconnecting, then live, with no duplicate row.

A step of scripts/test ("dashboard against coinwatchd"); screenshots go to ARTIFACT_DIR (default
.build/browser-artifacts).

Usage: "$(scripts/python-env)/bin/python" scripts/browser/dashboard_server_tests.py COINWATCHD COINWATCH [ARTIFACT_DIR]
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

from browser_support import CHROMIUM, ROOT, STATE_RECORDER, Runner, png_is_blank, wait_for
from playwright.sync_api import sync_playwright

DEVICE = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"


class Daemon:
    """coinwatchd on a fixed port (so the page can reconnect to the same address), with its data kept across
    restarts."""

    def __init__(self, binary, data, port, feed="none"):
        self.binary, self.data, self.port, self.feed, self.process = binary, data, port, feed, None

    def start(self):
        log = open(os.path.join(self.data, "log"), "a+")
        self.process = subprocess.Popen([self.binary, "--listen", f"127.0.0.1:{self.port}", "--data",
                                         os.path.join(self.data, "db"), "--feed", self.feed],
                                        stdout=log, stderr=subprocess.STDOUT)
        for _ in range(1200):  # bounded: 60 s however busy the machine
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("coinwatchd exited: " + open(os.path.join(self.data, "log")).read())
                time.sleep(0.05)
        raise RuntimeError("coinwatchd did not listen within 60 s")

    def kill(self):
        self.process.kill()
        self.process.wait(timeout=30)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(binary, port, *arguments):
    result = subprocess.run([binary, "--server", f"127.0.0.1:{port}", *arguments], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, f"coinwatch {' '.join(arguments)}: {result.stderr}"
    return result.stdout



def run(daemon, coinwatch, browser, artifacts, runner):
    port = daemon.port
    url = f"http://127.0.0.1:{port}/"
    cli(coinwatch, port, "publish", "BTC", "64250.5", "ETH", "3120.25")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.add_init_script(STATE_RECORDER)
    errors = []
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.goto(url)

    def loads_without_errors():
        wait_for(lambda: page.get_attribute("#connection", "data-state") == "live", 30, "live", page)
        wait_for(lambda: page.is_visible("tr[data-symbol=BTC]"), 30, "the BTC row", page)
        assert page.inner_text("tr[data-symbol=BTC] .price") == "64,250.5"
        assert not errors, errors

    def prices_change():
        cli(coinwatch, port, "publish", "BTC", "64300")
        wait_for(lambda: page.inner_text("tr[data-symbol=BTC] .price") == "64,300", 30, "the new BTC price", page)
        assert page.inner_text("tr[data-symbol=BTC] .change") == "+0.08%", page.inner_text("tr[data-symbol=BTC] .change")
        assert len(page.get_attribute("tr[data-symbol=BTC] polyline", "points").split()) == 2

    def threshold_saved_in_page_reads_back_in_cli():
        page.fill("#device-id", DEVICE)
        page.click("#device-form button")
        wait_for(lambda: "No settings saved" in page.inner_text("#settings-state"), 30, "the empty device", page)
        page.fill("#new-symbol", "BTC")
        page.fill("#new-below", "60000.5")
        page.click("#add-rule")
        page.click("#save")
        wait_for(lambda: "Saved: version 1" in page.inner_text("#settings-state"), 30, "the save", page)
        shown = json.loads(cli(coinwatch, port, "settings", "get", DEVICE, "--json"))
        assert shown["version"] == 1 and shown["rules"]["BTC"]["below"] == "60000.5", shown

    def cli_save_shows_in_page():
        cli(coinwatch, port, "settings", "set", DEVICE, "ETH", "--above", "4000")
        wait_for(lambda: page.is_visible("#rule-rows tr[data-symbol=ETH]"), 30, "the CLI's rule", page)
        assert page.input_value("#rule-rows tr[data-symbol=ETH] .above") == "4000"
        assert page.input_value("#rule-rows tr[data-symbol=BTC] .below") == "60000.5"

    def restart_shows_reconnecting_then_live():
        daemon.kill()
        wait_for(lambda: page.get_attribute("#connection", "data-state") == "reconnecting", 30, "reconnecting", page)
        daemon.start()
        wait_for(lambda: page.get_attribute("#connection", "data-state") == "live", 60, "live again", page)
        states = page.evaluate("window.__states")
        assert states[-3:] == ["live", "reconnecting", "live"] or "reconnecting" in states, states
        symbols = page.eval_on_selector_all("#price-rows tr", "rows => rows.map(r => r.dataset.symbol)")
        assert symbols == sorted(set(symbols)) == ["BTC", "ETH"], symbols
        cli(coinwatch, port, "publish", "BTC", "64310")
        wait_for(lambda: page.inner_text("tr[data-symbol=BTC] .price") == "64,310", 30, "a price after the restart", page)

    def screenshots():
        for name, width, height in (("desktop", 1280, 800), ("phone", 390, 844)):
            page.set_viewport_size({"width": width, "height": height})
            path = os.path.join(artifacts, f"dashboard-server-{name}.png")
            data = page.screenshot(path=path, full_page=True)
            assert not png_is_blank(data), f"{path} is blank"
            print(f"  screenshot: {path} ({len(data)} bytes)")

    for name, test in [("page loads live with no console error", loads_without_errors),
                       ("prices change as ticks are published", prices_change),
                       ("a threshold saved in the page reads back in the CLI", threshold_saved_in_page_reads_back_in_cli),
                       ("a save from the CLI shows in the page", cli_save_shows_in_page),
                       ("kill and restart: reconnecting, then live, no duplicate row", restart_shows_reconnecting_then_live),
                       ("screenshots at desktop and phone width", screenshots)]:
        runner.run(name, test)
    page.close()


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    artifacts = os.path.abspath(argv[3] if len(argv) > 3 else os.path.join(ROOT, ".build", "browser-artifacts"))
    os.makedirs(artifacts, exist_ok=True)
    runner = Runner()
    with tempfile.TemporaryDirectory(prefix="dashboard-server.") as data:
        daemon = Daemon(os.path.abspath(argv[1]), data, free_port())
        daemon.start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                run(daemon, os.path.abspath(argv[2]), browser, artifacts, runner)
                browser.close()
        finally:
            daemon.stop()
    print(f"artifacts in {artifacts}")
    return runner.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
