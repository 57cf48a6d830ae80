import CoinWatchModel
import Testing
import CoinWatchService
@testable import CoinWatchFeeds

/// Parsing recorded trades: exact prices, exchange symbols, and malformed lines skipped with their numbers.
struct ReplayRecordingTests {
    typealias F = PriceFixtures

    @Test func csvWithHeaderInAnyColumnOrder() {
        let recording = ReplayRecording(parsing: """
            price,symbol,timestamp
            64250.50,BTC,1700000000000
            "3450.25",ETHUSDT,1700000000100\r
            # a comment

            0.16235,BINANCE:DOGEUSDT,1700000000200
            """)
        #expect(recording.format == .csv)
        #expect(recording.skippedLines == 0)
        #expect(recording.warnings.isEmpty)
        #expect(recording.events == [
            ReplayEvent(timeMs: 1_700_000_000_000, symbol: F.symbol("BTC"), price: F.price("64250.5"), line: 2),
            ReplayEvent(timeMs: 1_700_000_000_100, symbol: F.symbol("ETH"), price: F.price("3450.25"), line: 3),
            ReplayEvent(timeMs: 1_700_000_000_200, symbol: F.symbol("DOGE"), price: F.price("0.16235"), line: 6),
        ])
        #expect(recording.symbols.map(\.rawValue) == ["BTC", "DOGE", "ETH"])
    }

    @Test func malformedCSVLinesAreSkippedWithTheirLineNumbers() {
        let recording = ReplayRecording(parsing: """
            timestamp,symbol,price
            1700000000000,BTC,64250.5
            1700000000001,BTC
            yesterday,BTC,1
            1700000000002,B!,1
            1700000000003,ETH,-4
            1700000000004,ETH,1.2.3
            1700000000005,ETH,0.0000000000000000001
            1700000000006,ETH,3450.25
            """)
        #expect(recording.events.map(\.line) == [2, 9])
        #expect(recording.skippedLines == 6)
        #expect(recording.warnings == [
            "line 3: expected at least 3 comma-separated fields, found 2",
            "line 4: timestamp 'yesterday' is not whole milliseconds since the epoch",
            "line 5: symbol: 'B!' does not name an asset (must be 2–10 characters of A-Z 0-9 (got 'B!'))",
            "line 6: price must be greater than 0 (got -4)",
            "line 7: price '1.2.3' is not a decimal number: more than one decimal point",
            "line 8: price '0.0000000000000000001' is not a decimal number: more than 18 digits after the point",
        ])
    }

    @Test func csvWithoutHeaderIsReadInTheDocumentedOrder() {
        let recording = ReplayRecording(parsing: "1700000000000,BTC,1\n1700000000001,ETH,2\n")
        #expect(recording.events.count == 2)
        #expect(recording.skippedLines == 0)
        #expect(recording.warnings == ["line 1: no header line; reading columns as timestamp,symbol,price"])
    }

    @Test func finnhubAndBinanceLinesKeepEveryDigit() {
        let recording = ReplayRecording(parsing: """
            {"type":"ping"}
            {"data":[{"c":null,"p":64250.5,"s":"BINANCE:BTCUSDT","t":1700000000000,"v":0.01},{"p":6.42505e4,"s":"BINANCE:BTCUSDT","t":1700000000001,"v":0}],"type":"trade"}
            {"e":"trade","E":1700000000009,"s":"ETHUSDT","t":12345,"p":"3450.25000000","q":"0.5","T":1700000000008,"m":true,"M":true}
            {"stream":"solusdt@trade","data":{"e":"trade","E":1700000000020,"s":"SOLUSDT","p":"145.370","T":1700000000019}}
            {"type":"subscribe-ack","symbol":"BINANCE:BTCUSDT"}
            { "data" : [ { "p" : 0.000012345678901234 , "s" : "COINBASE:SHIB-USD" , "t" : 1700000000030 } ] , "type" : "trade" }
            """)
        #expect(recording.format == .jsonLines)
        #expect(recording.skippedLines == 0)
        #expect(recording.warnings.isEmpty)
        #expect(recording.events.map(\.symbol.rawValue) == ["BTC", "BTC", "ETH", "SOL", "SHIB"])
        #expect(recording.events.map(\.price) == [
            F.price("64250.5"), F.price("64250.5"), F.price("3450.25"), F.price("145.37"),
            F.price("0.000012345678901234"),
        ])
        #expect(recording.events.map(\.timeMs) == [
            1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_008, 1_700_000_000_019, 1_700_000_000_030,
        ])
        #expect(recording.events.map(\.line) == [2, 2, 3, 4, 6])
    }

    @Test func malformedJSONLinesAreSkippedWithTheirLineNumbers() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        let recording = ReplayRecording(parsing: """
            {"type":"trade","data":[{"p":1,"s":"BTC","t":1}]}
            {"type":"trade","data":[{"p":1,"s":"BTC","t":1}
            {"type":"trade","data":[{"p":"abc","s":"BTC","t":1},{"p":2,"s":"BTC","t":2},{"s":"BTC","t":3}]}
            {"type":"trade","data":{"p":1}}
            {"e":"trade","s":"ETHUSDT","p":"1"}
            [1,2,3]
            {"hello":"world"}
            {"type":"trade","data":\(deep)}
            {"type":"trade","data":[{"p":1e999,"s":"BTC","t":1}]}
            {"type":"trade","data":[{"p":5,"s":"BTC","t":1.5}]}
            not json at all
            """)
        #expect(recording.events.map(\.line) == [1, 3])
        #expect(recording.events.map(\.price) == [F.price("1"), F.price("2")])
        #expect(recording.skippedLines == 10)
        #expect(recording.warnings.count == 11)
        #expect(recording.warnings[0] == "line 2: invalid JSON at column 48: expected ',' or ']' in an array")
        #expect(recording.warnings[1].hasPrefix("line 3: data[0]: price 'abc' is not a decimal number"))
        #expect(recording.warnings[2] == "line 3: data[2]: missing \"p\" (price)")
        #expect(recording.warnings[3] == "line 4: a trade message needs a \"data\" array")
        #expect(recording.warnings[4] == "line 5: missing trade time")
        #expect(recording.warnings[5] == "line 6: expected a JSON object")
        #expect(recording.warnings[6].hasPrefix("line 7: not a trade message"))
        #expect(recording.warnings[7].hasPrefix("line 8: invalid JSON at column"))
        #expect(recording.warnings[7].hasSuffix("nested deeper than 16 levels"))
        #expect(recording.warnings[8].hasPrefix("line 9: data[0]: price '1e999' is not a decimal number"))
        #expect(recording.warnings[9] == "line 10: data[0]: \"t\" '1.5' is not whole milliseconds since the epoch")
        #expect(recording.warnings[10].hasPrefix("line 11: "))
    }

    @Test func warningsAreCappedButEveryLineIsCounted() {
        let text = (1...100).map { "\($0),BTC,nope" }.joined(separator: "\n")
        let recording = ReplayRecording(parsing: "timestamp,symbol,price\n" + text)
        #expect(recording.skippedLines == 100)
        #expect(recording.warnings.count == ReplayRecording.maxWarnings + 1)
        #expect(recording.warnings.last == "… and 80 more")
        #expect(recording.events.isEmpty)
    }

    @Test func overlongLinesAreSkipped() {
        let long = "1,BTC," + String(repeating: "1", count: ReplayRecording.maxLineBytes)
        let recording = ReplayRecording(parsing: "timestamp,symbol,price\n\(long)\n2,BTC,3\n")
        #expect(recording.events.map(\.line) == [3])
        #expect(recording.warnings == ["line 2: longer than \(ReplayRecording.maxLineBytes) bytes"])
    }

    @Test func exchangeSymbolsMapToAssets() throws {
        let cases = [
            ("BINANCE:BTCUSDT", "BTC"), ("btcusdt", "BTC"), ("ETHUSD", "ETH"), ("SOLUSDC", "SOL"), ("BNBBUSD", "BNB"),
            ("BTCEUR", "BTC"), ("COINBASE:ETH-USD", "ETH"), ("KRAKEN:XRP/EUR", "XRP"), ("ADA", "ADA"), ("USDT", "USDT"),
            ("OP", "OP"),
        ]
        for (text, expected) in cases {
            #expect(try SymbolMap().asset(text).rawValue == expected, "\(text)")
        }
        #expect(throws: ValidationError.self) { try SymbolMap().asset("BINANCE:") }
    }

    @Test func decimalTextAppliesExponentsExactly() throws {
        #expect(try TradeNumber.exactDecimal("6.42505e4") == F.price("64250.5"))
        #expect(try TradeNumber.exactDecimal("1E-18") == F.price("0.000000000000000001"))
        #expect(try TradeNumber.exactDecimal("12.5e+1") == F.price("125"))
        #expect(try TradeNumber.exactDecimal("100e-20") == F.price("0.000000000000000001"))
        #expect(try TradeNumber.exactDecimal("0e5") == .zero)
        #expect(throws: DecimalParseError.self) { try TradeNumber.exactDecimal("1e-19") }
        #expect(try TradeNumber.exactDecimal("9e18") == ExactDecimal(9_000_000_000_000_000_000))
        #expect(throws: DecimalParseError.self) { try TradeNumber.exactDecimal("1e19") }
        #expect(throws: DecimalParseError.self) { try TradeNumber.exactDecimal("1e") }
    }
}
