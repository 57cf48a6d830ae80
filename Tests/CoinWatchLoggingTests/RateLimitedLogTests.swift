import Testing
import CoinWatchLogging

struct RateLimitedLogTests {
    @Test func theRateLimitedLogWritesTheFirstThenOnePerInterval() {
        var log = RateLimitedLog(interval: .seconds(60))
        let second: Int64 = 1_000_000_000
        #expect(log.admit("reconnect", now: 0) == 0)
        #expect(log.admit("reconnect", now: 10 * second) == nil)
        #expect(log.admit("reconnect", now: 20 * second) == nil)
        #expect(log.admit("gap", now: 20 * second) == 0)
        #expect(log.admit("reconnect", now: 60 * second) == 2)
        log.reset("reconnect")
        #expect(log.admit("reconnect", now: 61 * second) == 0)
    }
}
