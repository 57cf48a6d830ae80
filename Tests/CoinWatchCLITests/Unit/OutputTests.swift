@testable import CoinWatchCLI
import CoinWatchModel
import CoinWatchProto
import Testing

@Suite("Output formatting")
struct OutputTests {
    func decimal(_ text: String) throws -> V1.Decimal {
        V1.Decimal(try ExactDecimal(parsing: text))
    }

    @Test("JSON objects keep field order and quote decimals as strings")
    func jsonObject() {
        var object = JSONObject()
        object.string("symbol", "BTC \"x\"")
        object.decimal("price", ExactDecimal(mantissa: 642505, scale: 1))
        object.decimal("off", nil)
        object.integer("sequence", UInt64(12))
        object.bool("existed", false)
        #expect(object.description == #"{"symbol":"BTC \"x\"","price":"64250.5","off":null,"sequence":12,"existed":false}"#)
    }

    @Test("settings as JSON: sorted rules, off sides null, zero thresholds off")
    func settingsJSON() throws {
        var settings = V1.Settings(deviceID: "phone-1", version: 3, updatedAtMs: 1_700_000_000_123)
        settings.rules["ETH"] = V1.AlertRule(below: nil, above: try decimal("4000"))
        settings.rules["BTC"] = V1.AlertRule(below: try decimal("60000.50"), above: try decimal("0"))
        #expect(Presenter.settingsJSON(settings).description == """
            {"device_id":"phone-1","version":3,"updated_at_ms":1700000000123,"rules":{"BTC":{"below":"60000.5","above":null},\
            "ETH":{"below":null,"above":"4000"}}}
            """)
    }

    @Test("settings as text: a table with prices aligned on the point")
    func settingsText() throws {
        var settings = V1.Settings(deviceID: "phone-1", version: 2, updatedAtMs: 1_700_000_000_123)
        settings.rules["BTC"] = V1.AlertRule(below: try decimal("60000"), above: try decimal("70000.25"))
        settings.rules["DOGE"] = V1.AlertRule(below: try decimal("0.125"), above: nil)
        #expect(Presenter.settingsText(settings) == """
            device   phone-1
            version  2
            updated  2023-11-14T22:13:20.123Z

            SYMBOL      BELOW     ABOVE
            BTC     60000      70000.25
            DOGE        0.125      -

            """)
        #expect(Presenter.settingsText(V1.Settings(deviceID: "d", version: 1)).hasSuffix("rules    none\n"))
    }

    @Test("a decimal with an impossible scale is shown as such, not reinterpreted")
    func invalidDecimal() {
        #expect(DecimalDisplay.text(V1.Decimal(mantissa: 5, scale: 40)) == "invalid(5,40)")
        #expect(DecimalDisplay.text(nil) == nil)
        #expect(DecimalDisplay.json(V1.Decimal(mantissa: -1, scale: 3)) == "\"-0.001\"")
    }

    @Test("stream lines: one per update, JSON with stable names")
    func streamLines() throws {
        let update = V1.PriceUpdate(symbol: "BTC", price: try decimal("64250.5"), sourceTimeMs: 1_700_000_000_000, sequence: 12)
        #expect(Presenter.updateLine(update) == "BTC 64250.5 seq=12 time=2023-11-14T22:13:20.000Z")
        #expect(Presenter.updateJSON(update).description
            == #"{"symbol":"BTC","price":"64250.5","source_time_ms":1700000000000,"sequence":12}"#)
        var stale = update
        stale.stale = true
        stale.sources = 0
        #expect(Presenter.updateLine(stale) == "BTC 64250.5 seq=12 time=2023-11-14T22:13:20.000Z stale")
        var median = update
        median.sources = 3
        #expect(Presenter.updateLine(median) == "BTC 64250.5 seq=12 time=2023-11-14T22:13:20.000Z sources=3")
        #expect(Presenter.updateJSON(stale).description
            == #"{"symbol":"BTC","price":"64250.5","source_time_ms":1700000000000,"sequence":12,"stale":true}"#)
        #expect(Presenter.updateJSON(median).description.hasSuffix(#""sequence":12,"sources":3}"#))
        let alert = V1.Alert(
            id: "a1", deviceID: "phone-1", symbol: "BTC", direction: .below, threshold: try decimal("60000"),
            price: try decimal("59999.99"), timeMs: 1_700_000_000_000, idempotencyKey: "k", apnsPayloadJSON: "{}",
            apnsCollapseID: "c", pushInterest: "phone-1_btc_changed")
        #expect(Presenter.alertLine(alert) == "2023-11-14T22:13:20.000Z  BTC  ▼ below 60000  price 59999.99  id=a1")
        #expect(Presenter.alertJSON(alert).description == """
            {"id":"a1","device_id":"phone-1","symbol":"BTC","direction":"below","threshold":"60000","price":"59999.99",\
            "time_ms":1700000000000,"idempotency_key":"k","push_interest":"phone-1_btc_changed","apns_collapse_id":"c",\
            "apns_payload_json":"{}"}
            """)
    }

    @Test("timestamps in UTC ISO 8601, including before 1970 and leap days", arguments: [
        (Int64(1), "1970-01-01T00:00:00.001Z"),
        (Int64(951_782_400_000), "2000-02-29T00:00:00.000Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
        (Int64(4_102_444_800_000), "2100-01-01T00:00:00.000Z"),
        (Int64(0), "-"),
    ])
    func timestamps(milliseconds: Int64, expected: String) {
        #expect(TimeText.iso8601(milliseconds: milliseconds) == expected)
    }

    @Test("ages in short units")
    func ages() {
        #expect(TimeText.age(nanoseconds: 420_000_000) == "0.4s")
        #expect(TimeText.age(nanoseconds: 12_000_000_000) == "12s")
        #expect(TimeText.age(nanoseconds: 180_000_000_000) == "3m")
        #expect(TimeText.age(nanoseconds: 7_200_000_000_000) == "2h")
        #expect(TimeText.age(nanoseconds: 172_800_000_000_000) == "2d")
    }

    @Test("decimal columns line up on the point")
    func decimalAlignment() {
        #expect(TextTable.alignDecimals(["64250.5", "0.1234", "3120", "-"]) == [
            "64250.5   ", "    0.1234", " 3120     ", "    -     ",
        ])
    }

    @Test("prices table")
    func pricesTable() throws {
        let ticks = [
            V1.Tick(symbol: "BTC", price: try decimal("64250.5"), timeMs: 1_700_000_000_000),
            V1.Tick(symbol: "DOGE", price: try decimal("0.1234"), timeMs: 1_700_000_000_000),
        ]
        #expect(Presenter.pricesText(ticks) == """
            SYMBOL       PRICE  TIME
            BTC     64250.5     2023-11-14T22:13:20.000Z
            DOGE        0.1234  2023-11-14T22:13:20.000Z

            """)
        #expect(Presenter.pricesText([]) == "no prices\n")
        #expect(Presenter.pricesJSON(ticks).description == """
            {"prices":[{"symbol":"BTC","price":"64250.5","time_ms":1700000000000},\
            {"symbol":"DOGE","price":"0.1234","time_ms":1700000000000}]}
            """)
    }

    @Test("health lists each price source")
    func healthSources() throws {
        let feeds = [
            V1.FeedSourceHealth(
                name: "binance", connected: true, lastMessageAgeMs: 420, reconnects: 2, gaps: 1,
                messagesPerSecond: try decimal("12.3"), messages: 900, rejectedMessages: 4, lastError: "no message for 30 s"),
            V1.FeedSourceHealth(name: "kraken", connected: false, lastMessageAgeMs: -1, messagesPerSecond: try decimal("0")),
        ]
        let text = Presenter.healthText(
            status: .serving, address: "127.0.0.1:7878", serverName: "coinwatchd", serverVersion: "1.0", feeds: feeds)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines[0] == "SERVING — coinwatchd 1.0 at 127.0.0.1:7878")
        #expect(lines[1].hasPrefix("SOURCE   CONNECTED  LAST MESSAGE  MSG/S  RECONNECTS  GAPS  REJECTED  LAST ERROR"))
        #expect(lines[2] == "binance  yes           0.4 s ago   12.3           2     1         4  no message for 30 s")
        #expect(lines[3] == "kraken   no                never    0             0     0         0  -")
        let json = Presenter.healthJSON(
            status: .serving, address: "a", serverName: "n", serverVersion: "v", feeds: [feeds[0]]).description
        #expect(json.contains(#""feeds":[{"name":"binance","connected":true,"last_message_age_ms":420,"messages_per_second":"12.3","messages":900,"reconnects":2,"gaps":1,"rejected_messages":4,"last_error":"no message for 30 s"}]"#))
        #expect(Presenter.healthText(status: .serving, address: "a", serverName: "", serverVersion: "") == "SERVING — server at a\n")
    }
}
