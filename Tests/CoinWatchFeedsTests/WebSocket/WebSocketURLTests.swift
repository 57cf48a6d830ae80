import Testing
@testable import CoinWatchFeeds

struct WebSocketURLTests {
    @Test func urlsAreSplitIntoHostPortAndTarget() throws {
        let cases: [(String, WebSocketURL)] = [
            ("wss://ws.finnhub.io?token=abc", WebSocketURL(isSecure: true, host: "ws.finnhub.io", port: 443, target: "/?token=abc")),
            ("ws://127.0.0.1:9001/ws", WebSocketURL(isSecure: false, host: "127.0.0.1", port: 9001, target: "/ws")),
            ("WSS://Stream.Binance.com:9443/stream?streams=btcusdt@trade",
             WebSocketURL(isSecure: true, host: "Stream.Binance.com", port: 9443, target: "/stream?streams=btcusdt@trade")),
            ("ws://[::1]:8080", WebSocketURL(isSecure: false, host: "::1", port: 8080, target: "/")),
            ("ws://localhost", WebSocketURL(isSecure: false, host: "localhost", port: 80, target: "/")),
        ]
        for (text, expected) in cases {
            #expect(try WebSocketURL(parsing: text) == expected, "\(text)")
        }
        #expect(try WebSocketURL(parsing: "ws://[::1]:8080/x").hostHeader == "[::1]:8080")
        #expect(try WebSocketURL(parsing: "wss://ws.finnhub.io?token=secret").redacted == "wss://ws.finnhub.io/?…")
    }

    @Test func badURLsAreRefusedWithAReason() {
        for text in ["http://x", "ws://", "ws://:80", "ws://h:0", "ws://h:70000", "ws://h:x", "ws://u@h", "ws://h/a b",
                     "ws://h/#frag", "ws://[::1", "wss://[::1]x"] {
            #expect(throws: FeedError.self, "\(text)") { try WebSocketURL(parsing: text) }
        }
    }
}
