#!/usr/bin/env python3
"""Takes the README's picture of the dashboard: a coinwatchd on the simulator, the page open on a device with
thresholds near the simulated BTC price, after the price line has drawn for a while and (if the walk crossed a
threshold meanwhile) an alert has come in. Writes docs/images/dashboard.png (or OUT).

Usage: "$(scripts/python-env)/bin/python" scripts/browser/readme_screenshot.py COINWATCHD COINWATCH [OUT]
"""
import json
import os
import sys
import tempfile
import time
from decimal import Decimal

from browser_support import CHROMIUM, ROOT, png_is_blank, wait_for
from dashboard_server_tests import DEVICE, Daemon, cli, free_port
from playwright.sync_api import sync_playwright


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = os.path.abspath(argv[3] if len(argv) > 3 else os.path.join(ROOT, "docs", "images", "dashboard.png"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="coinwatch-screenshot") as data:
        daemon = Daemon(argv[1], data, free_port(), feed="sim")
        daemon.start()
        try:
            port = daemon.port
            prices = {p["symbol"]: Decimal(p["price"]) for p in json.loads(cli(argv[2], port, "prices", "--json"))["prices"]}
            btc = prices["BTC"]
            # Thresholds a step of the walk away on either side, so one is likely crossed while the line draws.
            below, above = (btc * Decimal("0.9995")).quantize(Decimal("0.01")), (btc * Decimal("1.0005")).quantize(Decimal("0.01"))
            cli(argv[2], port, "settings", "set", DEVICE, "BTC", "--below", str(below), "--above", str(above))
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(f"http://127.0.0.1:{port}/")
                wait_for(lambda: page.get_attribute("#connection", "data-state") == "live", 30, "live", page)
                page.fill("#device-id", DEVICE)
                page.click("#device-form button")
                wait_for(lambda: page.is_visible("#rule-rows tr[data-symbol=BTC]"), 30, "the device's rule", page)
                deadline = time.monotonic() + 60  # bounded: the picture is taken whether or not an alert came
                while time.monotonic() < deadline and not page.query_selector_all("#alerts li"):
                    time.sleep(0.5)
                time.sleep(5)  # a few more points on the price lines
                data_png = page.screenshot(path=out)
                assert not png_is_blank(data_png), f"{out} is blank"
                print(f"{out}: {len(data_png)} bytes, {len(page.query_selector_all('#alerts li'))} alert(s) shown")
                browser.close()
        finally:
            daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
