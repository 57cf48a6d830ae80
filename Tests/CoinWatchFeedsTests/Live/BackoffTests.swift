import Testing
@testable import CoinWatchFeeds

/// Capped exponential backoff with full jitter, longer after errors and rate limits; the random draw is injected.
struct BackoffTests {
    static let second: Int64 = 1_000_000_000

    @Test func ceilingsDoubleFrom1sTo60sAndTheDrawIsFull() {
        var highest = Backoff(random: { $0 })
        #expect((1...8).map { _ in highest.delay(after: .connection) / Self.second } == [1, 2, 4, 8, 16, 32, 60, 60])
        var lowest = Backoff(random: { _ in 0 })
        #expect(lowest.delay(after: .connection) == 0)
        highest.reset()
        #expect(highest.delay(after: .connection) == Self.second)
        for _ in 0..<100 { _ = highest.delay(after: .connection) }
        #expect(highest.delay(after: .connection) == 60 * Self.second)
    }

    @Test func aVenueErrorWaitsLonger() {
        var backoff = Backoff(random: { $0 })
        #expect(backoff.delay(after: .venueError) == 5 * Self.second)   // ceiling 4 s, floor 5 s
        #expect(backoff.delay(after: .venueError) == 32 * Self.second)
        var lowest = Backoff(random: { _ in 0 })
        #expect(lowest.delay(after: .venueError) == 5 * Self.second)
    }

    @Test func aRateLimitWaitsHalfTheCapToTheCapOrItsRetryAfter() {
        var low = Backoff(random: { _ in 0 })
        #expect(low.delay(after: .rateLimited(retryAfterSeconds: nil)) == 30 * Self.second)
        var high = Backoff(random: { $0 })
        #expect(high.delay(after: .rateLimited(retryAfterSeconds: 5)) == 60 * Self.second)
        #expect(low.delay(after: .rateLimited(retryAfterSeconds: 120)) == 120 * Self.second)
        #expect(low.delay(after: .rateLimited(retryAfterSeconds: 1_000_000)) == 600 * Self.second)
    }

    @Test func drawsStayWithinTheCeilingWithTheRealGenerator() {
        var backoff = Backoff()
        for failure in 1...20 {
            let ceiling = min(60, 1 << min(failure - 1, 10)) * Self.second
            let delay = backoff.delay(after: .connection)
            #expect(delay >= 0 && delay <= ceiling, "failure \(failure)")
        }
    }
}
