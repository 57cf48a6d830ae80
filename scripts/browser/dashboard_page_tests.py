#!/usr/bin/env python3
"""The dashboard in a real browser (Debian's chromium, headless, driven by Playwright) against scripted Connect
answers: what the page shows and sends for each answer the protocol allows, independent of any server.

Usage: "$(scripts/python-env)/bin/python" scripts/browser/dashboard_page_tests.py [ARTIFACT_DIR]

The page's files are the ones coinwatchd embeds (web/dashboard/). Screenshots at desktop and phone width are
written to ARTIFACT_DIR (default .build/browser-artifacts) and checked not to be blank.
"""
import json
import os
import sys

from browser_support import (CHROMIUM, ROOT, STATE_RECORDER, Runner, end_stream, envelope, json_message, pb,
                             png_is_blank, price, wait_for)
from playwright.sync_api import sync_playwright

ORIGIN = "http://dashboard.test"
WEB = os.path.join(ROOT, "web", "dashboard")
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


class ScriptedServer:
    """Answers the page's requests: its files from web/dashboard, Connect calls from per-method scripts.

    A script is a list of answers used in order (the last one repeats); each is (status, content type, body).
    Requests are recorded per method."""

    def __init__(self, page, origin=ORIGIN):
        self.scripts, self.requests, self.senders, self.origin = {}, {}, {}, origin
        page.route(f"{origin}/**", self.handle)

    def script(self, method, *answers):
        self.scripts[method] = list(answers)

    def calls(self, method):
        return self.requests.get(method, [])

    def callers(self, method):
        """The page that sent each request of `method`."""
        return self.senders.get(method, [])

    def handle(self, route):
        request = route.request
        path = request.url[len(self.origin):].split("?")[0].split("#")[0]
        if path in ("/", "/index.html", "/dashboard.js", "/dashboard.css"):
            name = "index.html" if path in ("/", "/index.html") else path[1:]
            with open(os.path.join(WEB, name), "rb") as f:
                return route.fulfill(status=200, body=f.read(), headers={"content-type": TYPES[os.path.splitext(name)[1]]})
        method = path.rsplit("/", 1)[-1]
        self.requests.setdefault(method, []).append(request.post_data_buffer)
        self.senders.setdefault(method, []).append(request.frame.page)
        answers = self.scripts.get(method)
        if not answers:
            return route.fulfill(status=404, body=b'{"code":"unimplemented"}', headers={"content-type": "application/json"})
        status, content_type, body = answers.pop(0) if len(answers) > 1 else answers[0]
        return route.fulfill(status=status, body=body, headers={"content-type": content_type})


def stream(*messages, end=None):
    body = b"".join(envelope(0, m) for m in messages)
    return (200, "application/connect+json", body + (end if end is not None else end_stream()))


def unary(message):
    return (200, "application/json", json_message(message))


def error(status, code, text=""):
    return (status, "application/json", json.dumps({"code": code, "message": text}).encode())


def states(page):
    """Every connection state the page has shown, in order (consecutive repeats merged)."""
    return page.evaluate("window.__states")


def open_page(browser, width=1280, height=800):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.add_init_script(STATE_RECORDER)
    errors = []
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    server = ScriptedServer(page)
    return page, server, errors


def row_symbols(page):
    return page.eval_on_selector_all("#price-rows tr", "rows => rows.map(r => r.dataset.symbol)")


def test_prices_render_exactly(browser):
    page, server, errors = open_page(browser)
    server.script("StreamPrices",
                  stream(price("ETH", 300012, 2, 1), price("BTC", 642505, 1, 2), price("BTC", 6425051, 2, 3)),
                  (200, "application/connect+json", envelope(0, price("BTC", 6425051, 2, 1))))  # then stays quiet
    page.goto(ORIGIN + "/")
    wait_for(lambda: page.inner_text("tr[data-symbol=BTC] .price") == "64,250.51", 10, "the BTC price", page)
    assert page.inner_text("tr[data-symbol=ETH] .price") == "3,000.12"
    assert row_symbols(page) == ["BTC", "ETH"], row_symbols(page)
    # Change since the day's first price: 64,250.5 → 64,250.51 is +0.00% (rounded), exact arithmetic.
    assert page.inner_text("tr[data-symbol=BTC] .change") == "0.00%"
    points = page.get_attribute("tr[data-symbol=BTC] polyline", "points")
    assert points and len(points.split()) == 2, points
    assert page.get_attribute("tr[data-symbol=BTC] svg", "aria-label").startswith("BTC trend over 2 prices")
    assert not errors, errors
    page.close()


def test_reconnect_shows_state_and_keeps_one_row_per_symbol(browser):
    page, server, errors = open_page(browser)
    server.script("StreamPrices",
                  stream(price("BTC", 100, 0, 1), price("SOL", 20, 0, 2)),
                  stream(price("BTC", 100, 0, 1), price("SOL", 21, 0, 2), price("BTC", 101, 0, 3)),
                  (200, "application/connect+json", envelope(0, price("BTC", 101, 0, 1))))
    page.goto(ORIGIN + "/")
    wait_for(lambda: page.inner_text("tr[data-symbol=BTC] .price") == "101", 15, "the price after reconnecting", page)
    wait_for(lambda: page.get_attribute("#connection", "data-state") == "reconnecting"
             or len(server.calls("StreamPrices")) >= 3, 15, "a third stream", page)
    assert row_symbols(page) == ["BTC", "SOL"], row_symbols(page)
    # The resent snapshot price (100 at the same time) adds no sparkline point: 100, 101 only.
    assert len(page.get_attribute("tr[data-symbol=BTC] polyline", "points").split()) == 2
    assert page.inner_text("tr[data-symbol=BTC] .change") == "+1.00%"
    assert not errors, errors
    page.close()


def test_connection_states(browser):
    page, server, errors = open_page(browser)
    server.script("StreamPrices", stream(price("BTC", 1, 0, 1), end=end_stream("unavailable", "shutting down")))
    page.goto(ORIGIN + "/")
    wait_for(lambda: page.get_attribute("#connection", "data-state") == "reconnecting", 10, "reconnecting", page)
    assert "Reconnecting" in page.inner_text("#connection-text")
    assert page.is_visible("#retry")
    # A scripted answer ends at once, so "live" lasts only until its body is read: check the states shown.
    server.script("StreamPrices", (200, "application/connect+json", envelope(0, price("BTC", 2, 0, 1))))
    wait_for(lambda: "live" in states(page)[states(page).index("reconnecting"):], 15, "live after reconnecting", page)
    page.context.set_offline(True)
    wait_for(lambda: page.get_attribute("#connection", "data-state") == "offline", 20, "offline", page)
    assert "Offline" in page.inner_text("#connection-text")
    page.context.set_offline(False)
    wait_for(lambda: states(page)[-1] != "offline", 10, "back online", page)
    assert not errors, errors
    page.close()


def test_truncated_stream_and_sequence_gap_restart_the_stream(browser):
    page, server, errors = open_page(browser)
    truncated = (200, "application/connect+json", envelope(0, price("BTC", 5, 0, 1)) + b"\x00\x00\x00")
    gap = stream(price("BTC", 6, 0, 1), price("BTC", 7, 0, 3))
    server.script("StreamPrices", truncated, gap, (200, "application/connect+json", envelope(0, price("BTC", 8, 0, 1))))
    page.goto(ORIGIN + "/")
    wait_for(lambda: len(server.calls("StreamPrices")) >= 3, 20, "a stream after the truncated and the gapped one", page)
    wait_for(lambda: page.inner_text("tr[data-symbol=BTC] .price") == "8", 10, "the price of the third stream", page)
    # The message after the gap (7, sequence 3) was never shown.
    assert "7" not in page.get_attribute("tr[data-symbol=BTC] svg", "aria-label")
    # Every StreamPrices request is one envelope holding {} (all symbols).
    for body in server.calls("StreamPrices"):
        assert body[:5] == b"\x00\x00\x00\x00\x02" and body[5:] == b"{}", body
    page.close()


def test_stale_marker(browser):
    page, server, errors = open_page(browser)
    server.script("StreamPrices", (200, "application/connect+json",
                                   envelope(0, price("BTC", 1, 0, 1, stale=True)) + envelope(0, price("ETH", 2, 0, 2))))
    page.goto(ORIGIN + "/")
    wait_for(lambda: page.is_visible("tr[data-symbol=BTC] .badge"), 10, "the stale badge", page)
    assert page.inner_text("tr[data-symbol=BTC] .badge") == "STALE"
    assert "stale" in page.get_attribute("tr[data-symbol=BTC]", "class")
    assert page.query_selector("tr[data-symbol=ETH] .badge") is None, "a price without the flag is not stale"
    page.close()


def settings_answer(version, rules):
    settings = pb.Settings(device_id="phone-1", version=version, updated_at_ms=1_700_000_000_000)
    for symbol, (below, above) in rules.items():
        rule = settings.rules[symbol]
        if below:
            rule.below.CopyFrom(pb.Decimal(mantissa=below[0], scale=below[1]))
        if above:
            rule.above.CopyFrom(pb.Decimal(mantissa=above[0], scale=above[1]))
    return unary(pb.GetSettingsResponse(settings=settings))


def test_device_settings_save_and_conflict(browser):
    page, server, errors = open_page(browser)
    server.script("StreamPrices", (200, "application/connect+json", envelope(0, price("BTC", 1, 0, 1))))
    server.script("StreamAlerts", (200, "application/connect+json", b""))
    server.script("GetSettings", settings_answer(4, {"BTC": ((600005, 1), None)}))
    page.goto(ORIGIN + "/")
    page.fill("#device-id", "phone-1")
    page.click("#device-form button")
    wait_for(lambda: page.is_visible("#rule-rows tr[data-symbol=BTC]"), 10, "the BTC rule", page)
    assert page.input_value("#rule-rows tr[data-symbol=BTC] .below") == "60000.5"
    assert "Version 4" in page.inner_text("#settings-state")
    assert json.loads(server.calls("GetSettings")[0]) == {"deviceId": "phone-1"}

    # Edit BTC, add ETH, save: a patch with expected_version 4 and exact decimals.
    saved = pb.SaveSettingsResponse(settings=pb.Settings(device_id="phone-1", version=5))
    saved.settings.rules["BTC"].below.CopyFrom(pb.Decimal(mantissa=61, scale=0))
    saved.settings.rules["ETH"].above.CopyFrom(pb.Decimal(mantissa=40001, scale=1))
    server.script("SaveSettings", unary(saved))
    page.fill("#rule-rows tr[data-symbol=BTC] .below", "61,000")
    page.fill("#new-symbol", "eth")
    page.fill("#new-above", "4000.10")
    page.click("#add-rule")
    page.click("#save")
    wait_for(lambda: "Saved: version 5" in page.inner_text("#settings-state"), 10, "the save", page)
    request = json.loads(server.calls("SaveSettings")[0])
    assert request == {"deviceId": "phone-1", "expectedVersion": "4", "removeSymbols": [],
                       "setRules": {"BTC": {"below": {"mantissa": "61000"}},
                                    "ETH": {"above": {"mantissa": "40001", "scale": 1}}}}, request

    # Another tab saved meanwhile: the save is refused ABORTED and the page says so instead of overwriting.
    server.script("SaveSettings", error(409, "aborted", "settings of device phone-1 are at version 6, not 5"))
    server.script("GetSettings", settings_answer(6, {"BTC": ((1, 0), None)}))
    page.click("#rule-rows tr[data-symbol=ETH] .remove")
    page.click("#save")
    wait_for(lambda: page.is_visible("#conflict"), 10, "the conflict", page)
    assert "now version 6" in page.inner_text("#conflict-text"), page.inner_text("#conflict-text")
    assert json.loads(server.calls("SaveSettings")[1])["removeSymbols"] == ["ETH"]
    # Overwrite deliberately: saved against the version now stored.
    server.script("SaveSettings", unary(pb.SaveSettingsResponse(settings=pb.Settings(device_id="phone-1", version=7))))
    page.click("#conflict-overwrite")
    wait_for(lambda: len(server.calls("SaveSettings")) == 3, 10, "the overwrite", page)
    assert json.loads(server.calls("SaveSettings")[2])["expectedVersion"] == "6"
    # A bad threshold is explained, not sent.
    page.fill("#new-symbol", "SOL")
    page.fill("#new-below", "12abc")
    page.click("#add-rule")
    assert "not a positive decimal" in page.inner_text("#rules-error")
    # The browser reports the scripted 409 as a failed resource; nothing else may be logged.
    assert all("status of 409" in e for e in errors), errors
    page.close()


def test_external_save_shows_in_the_page(browser):
    page, server, errors = open_page(browser)
    server.script("StreamPrices", (200, "application/connect+json", b""))
    server.script("StreamAlerts", (200, "application/connect+json", b""))
    server.script("GetSettings", error(404, "not_found", "no settings"))
    page.goto(ORIGIN + "/#device=phone-2")
    wait_for(lambda: "No settings saved" in page.inner_text("#settings-state"), 10, "the empty device", page)
    server.script("GetSettings", settings_answer(1, {"SOL": (None, (25, 0))}))
    wait_for(lambda: page.is_visible("#rule-rows tr[data-symbol=SOL]"), 15, "the rule saved elsewhere", page)
    assert page.input_value("#rule-rows tr[data-symbol=SOL] .above") == "25"
    page.close()


def test_alerts_shown_once_across_reconnects(browser):
    page, server, errors = open_page(browser)
    server.script("StreamPrices", (200, "application/connect+json", b""))
    server.script("GetSettings", error(404, "not_found"))
    alert = pb.Alert(id="a1", device_id="phone-3", symbol="BTC", direction=pb.DIRECTION_BELOW,
                     threshold=pb.Decimal(mantissa=60000), price=pb.Decimal(mantissa=599995, scale=1), time_ms=1)
    second = pb.Alert(id="a2", device_id="phone-3", symbol="ETH", direction=pb.DIRECTION_ABOVE,
                      threshold=pb.Decimal(mantissa=3000), price=pb.Decimal(mantissa=3001), time_ms=2)
    server.script("StreamAlerts", stream(json_message(alert), end=end_stream("unavailable")),
                  (200, "application/connect+json", envelope(0, json_message(alert)) + envelope(0, json_message(second))))
    page.goto(ORIGIN + "/#device=phone-3")
    wait_for(lambda: len(page.query_selector_all("#alerts li")) == 2, 15, "both alerts", page)
    page.wait_for_timeout(300)
    texts = page.eval_on_selector_all("#alerts li", "items => items.map(i => i.textContent)")
    assert len(texts) == 2 and texts[0].startswith("ETH rose to 3,001") and texts[1].startswith("BTC fell to 59,999.5"), texts
    assert json.loads(server.calls("StreamAlerts")[0][5:]) == {"deviceId": "phone-3"}
    page.close()


def test_tabs_share_one_price_stream(browser):
    # localhost is a secure context, where the page shares one stream between tabs (Web Locks, BroadcastChannel).
    origin = "http://localhost:8799"
    context = browser.new_context()
    context.add_init_script(STATE_RECORDER)
    server = ScriptedServer(context, origin)
    server.script("StreamPrices", (200, "application/connect+json",
                                   envelope(0, price("BTC", 100, 0, 1)) + envelope(0, price("ETH", 5, 0, 2))))
    first = context.new_page()
    first.goto(origin + "/")
    wait_for(lambda: row_symbols(first) == ["BTC", "ETH"], 10, "prices in the first tab", first)
    second = context.new_page()
    second.goto(origin + "/")
    wait_for(lambda: row_symbols(second) == ["BTC", "ETH"], 10, "prices in the second tab", second)
    assert second.inner_text("tr[data-symbol=BTC] .price") == "100"
    assert second.evaluate("sharing.leader") is False and first.evaluate("sharing.leader") is True
    # The scripted stream ends at once and the leader retries; every stream so far is the first tab's.
    first.wait_for_timeout(1500)
    assert server.callers("StreamPrices") and all(p == first for p in server.callers("StreamPrices"))
    # The leader closes: the second tab takes over with a stream of its own.
    server.script("StreamPrices", (200, "application/connect+json", envelope(0, price("BTC", 101, 0, 1))))
    first.close()
    wait_for(lambda: second.evaluate("sharing.leader"), 10, "the second tab to lead", second)
    wait_for(lambda: second.inner_text("tr[data-symbol=BTC] .price") == "101", 10, "the new leader's price", second)
    assert server.callers("StreamPrices")[-1] == second
    assert "live" in states(second)
    context.close()


def test_screenshots(browser, artifacts):
    for name, width, height in (("desktop", 1280, 800), ("phone", 390, 844)):
        page, server, errors = open_page(browser, width, height)
        server.script("StreamPrices", (200, "application/connect+json", b"".join(
            envelope(0, price(s, m, 2, i + 1)) for i, (s, m) in enumerate(
                [("ADA", 4512), ("BTC", 6425050), ("DOGE", 1234), ("ETH", 300012), ("SOL", 15033)]))))
        server.script("GetSettings", settings_answer(2, {"BTC": ((6000000, 2), (7000000, 2))}))
        server.script("StreamAlerts", (200, "application/connect+json", b""))
        page.goto(ORIGIN + "/#device=3f2504e0-4f89-11d3-9a0c-0305e82c3301")
        wait_for(lambda: len(row_symbols(page)) == 5 and page.is_visible("#rule-rows tr"), 10, "the page filled", page)
        path = os.path.join(artifacts, f"dashboard-{name}.png")
        data = page.screenshot(path=path, full_page=True)
        assert not png_is_blank(data), f"{path} is blank"
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name}: the page scrolls sideways by {overflow}px"
        print(f"  screenshot: {path} ({len(data)} bytes)")
        assert not errors, errors
        page.close()


def main(argv):
    artifacts = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(ROOT, ".build", "browser-artifacts"))
    os.makedirs(artifacts, exist_ok=True)
    runner = Runner()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for name, test in [(n, f) for n, f in globals().items() if n.startswith("test_") and n != "test_screenshots"]:
            runner.run(name, test, browser)
        runner.run("test_screenshots", test_screenshots, browser, artifacts)
        browser.close()
    print(f"artifacts in {artifacts}")
    return runner.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
