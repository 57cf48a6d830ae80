import CoinWatchModel
import Testing
@testable import CoinWatchFeeds

/// The adapters read every message as the tree-based readers before them did (`ReferenceVenues`): the same
/// trades, the same errors, the same `unknown` and `skipped` verdicts, on real messages, on generated ones (keys in
/// any order, repeated, escaped; values of every kind) and on broken copies of both.
struct VenueReaderAgreementTests {
    static let adapters: [any VenueAdapter] = [
        FinnhubVenue(), BinanceVenue(), CoinbaseVenue(channel: .matches), CoinbaseVenue(channel: .ticker),
        KrakenVenue(channel: .trade), KrakenVenue(channel: .ticker),
    ]

    static let messages = [
        #"{"type":"trade","data":[{"p":7296.89,"s":"BINANCE:BTCUSDT","t":1575526691134,"v":0.011467},{"p":"6.42505e4","s":"BINANCE:ETHUSDT","t":1,"v":0}]}"#,
        #"{"data":[{"p":1,"s":"BINANCE:BTCUSDT"},{"p":0,"s":""},7],"type":"trade"}"#,
        #"{"type":"ping"}"#,
        #"{"type":"error","msg":"API limit reached"}"#,
        #"{"stream":"btcusdt@trade","data":{"e":"trade","E":1718000000010,"s":"BTCUSDT","t":3600000001,"p":"64250.50000000","q":"0.01","T":1718000000009,"m":true}}"#,
        #"{"e":"aggTrade","E":5,"s":"ETHUSDT","a":7,"p":"3450.25","T":4}"#,
        #"{"error":{"code":-1003,"msg":"Too many requests"},"id":1}"#,
        #"{"result":null,"id":1}"#,
        #"{"type":"match","trade_id":10,"sequence":50,"time":"2024-06-10T06:13:20.123456Z","product_id":"BTC-USD","size":"5.2","price":"64250.01","side":"sell"}"#,
        #"{"type":"ticker","sequence":37475248783,"product_id":"ETH-USD","price":"3450.25","time":"2024-06-10T00:00:00.000001Z","trade_id":370843401}"#,
        #"{"type":"heartbeat","sequence":90,"last_trade_id":20,"product_id":"BTC-USD","time":"2024-06-10T00:00:00Z"}"#,
        #"{"type":"error","message":"Failed to subscribe","reason":"rate limit"}"#,
        #"{"channel":"trade","type":"update","data":[{"symbol":"BTC/USD","side":"sell","price":64250.5,"qty":0.01,"trade_id":4665906,"timestamp":"2024-06-10T00:00:01.5Z"},{"symbol":"XBT/USD","price":"nope","trade_id":1,"timestamp":"2024-06-10T00:00:01.6Z"}]}"#,
        #"{"data":[{"symbol":"ETH/USD","bid":3450.1,"last":3450.25,"timestamp":"2024-06-10T00:00:01Z"}],"type":"snapshot","channel":"ticker"}"#,
        #"{"method":"subscribe","result":{"channel":"trade","symbol":"BTC/USD"},"success":true,"req_id":1}"#,
        #"{"method":"subscribe","error":"Exceeded msg rate","success":false}"#,
        #"{"channel":"status","data":[{"system":"online"}]}"#,
        #"{"channel":"heartbeat"}"#,
    ]

    /// Reads with the adapter and with the reference; also with the instruments the reference found subscribed,
    /// which must change nothing but where the names come from.
    static func check(_ text: String) {
        for adapter in adapters {
            let expected = Result { () throws(VenueParseError) in try ReferenceVenues.read(adapter, text: text) }
            let read = Result { () throws(VenueParseError) in try adapter.read(text: text) }
            #expect(read == expected, "\(adapter.name): \(text)")
            guard case .success(.trades(let trades, _)) = expected, !trades.isEmpty else { continue }
            var context = VenueReadContext(instruments: VenueInstruments(trades.map(\.instrument) + ["OTHER"]))
            var bytes = text
            let subscribed = bytes.withUTF8 { utf8 in
                Result { () throws(VenueParseError) in try adapter.read(UnsafeRawBufferPointer(utf8), &context) }
            }
            #expect(subscribed == expected, "\(adapter.name), subscribed: \(text)")
        }
    }

    @Test func realMessagesReadAsBefore() {
        for message in Self.messages {
            Self.check(message)
        }
    }

    @Test func generatedMessagesReadAsBefore() {
        var generator = MessageGenerator(seed: 7)
        for _ in 0..<3000 {
            Self.check(generator.message())
        }
    }

    @Test func brokenCopiesReadAsBefore() {
        var generator = MessageGenerator(seed: 8)
        let generated = (0..<4).map { _ in generator.message() }
        for (index, message) in (Self.messages + generated).enumerated() {
            let random = MessageMutations.random(of: message, count: 300, seed: UInt64(index))
            for mutated in MessageMutations.everyPosition(of: message) + random {
                Self.check(String(decoding: mutated, as: UTF8.self))
            }
        }
    }

    /// One context read after read, as a source keeps it, gives what separate reads give, and a message kept
    /// while the next is read keeps its trades.
    @Test func aContextKeptFromMessageToMessageChangesNothing() {
        var generator = MessageGenerator(seed: 9)
        let texts = Self.messages + (0..<500).map { _ in generator.message() }
        for adapter in Self.adapters {
            var context = VenueReadContext(instruments: VenueInstruments(["BTCUSDT", "BINANCE:BTCUSDT", "BTC/USD"]))
            var kept: [Result<VenueMessage, VenueParseError>] = []
            for text in texts {
                var text = text
                kept.append(text.withUTF8 { utf8 in
                    Result { () throws(VenueParseError) in try adapter.read(UnsafeRawBufferPointer(utf8), &context) }
                })
            }
            let separate = texts.map { text in Result { () throws(VenueParseError) in try adapter.read(text: text) } }
            #expect(kept == separate, "\(adapter.name)")
        }
    }
}

/// Messages in the venues' shapes, with the freedom JSON allows: keys in any order, repeated or escaped, and
/// values of the wrong kind.
struct MessageGenerator {
    var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    static let keys = [
        "type", "data", "s", "p", "t", "v", "e", "E", "T", "a", "stream", "error", "id", "result", "msg", "code",
        "channel", "method", "success", "symbol", "price", "last", "timestamp", "trade_id", "product_id", "time",
        "sequence", "last_trade_id", "message", "reason", "x",
    ]
    static let words = [
        "trade", "ping", "error", "match", "last_match", "ticker", "heartbeat", "subscriptions", "aggTrade",
        "serverShutdown", "status", "subscribe", "pong", "book", "update", "news",
    ]
    static let strings = [
        "BINANCE:BTCUSDT", "BTCUSDT", "BTC-USD", "BTC/USD", "", "1.5", "64250.50", "-1", "0", "abc", "6.42505e4",
        "2024-06-10T00:00:00Z", "2024-06-10T06:13:20.123456Z", "soon", "18446744073709551615", "Too many requests",
        "rate limit", "a\\u0042c", "\\u00e9t\\u00e9", "\\ud83d\\ude00", "-0",
    ]
    static let numbers = [
        "1", "0", "-5", "1.5", "7296.89", "6.42505e4", "1E-18", "1e-19", "1575526691134", "18446744073709551616",
        "-0", "0.000012345678901234", "-1003", "1e400", "12.5e+1",
    ]

    mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &random)! }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    mutating func message() -> String { object(depth: 0) }

    mutating func object(depth: Int) -> String {
        let count = Int.random(in: 0...(depth == 0 ? 7 : 5), using: &random)
        var members: [String] = []
        for _ in 0..<count {
            var key = pick(Self.keys)
            // An escaped key must still be found.
            if chance(5), let first = key.unicodeScalars.first {
                key = "\\u00" + String(first.value, radix: 16) + key.dropFirst()
            }
            members.append("\"\(key)\":\(value(for: key, depth: depth + 1))")
        }
        return "{" + members.joined(separator: chance(10) ? " , " : ",") + "}"
    }

    mutating func value(for key: String, depth: Int) -> String {
        if key == "data" && chance(70) && depth < 3 {
            if chance(60) {
                return "[" + (0..<Int.random(in: 0...3, using: &random)).map { _ in item(depth: depth + 1) }
                    .joined(separator: ",") + "]"
            }
            return object(depth: depth)
        }
        if (key == "type" || key == "e" || key == "channel" || key == "method") && chance(80) {
            return "\"\(pick(Self.words))\""
        }
        return value(depth: depth)
    }

    mutating func item(depth: Int) -> String {
        chance(90) ? object(depth: depth) : value(depth: depth)
    }

    mutating func value(depth: Int) -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0...3: "\"\(pick(Self.strings))\""
        case 4...6: pick(Self.numbers)
        case 7: pick(["true", "false", "null"])
        case 8 where depth < 4: object(depth: depth)
        default: depth < 4 ? "[" + value(depth: depth + 1) + "]" : "null"
        }
    }
}
