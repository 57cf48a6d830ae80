import CoinWatchClient
import Testing

@Suite("follow backoff")
struct FollowBackoffTests {
    @Test("pauses double from the initial one up to the maximum")
    func growsAndCaps() {
        let backoff = FollowBackoff(initial: .milliseconds(250), maximum: .seconds(5), jitter: 0.2)
        let pauses = (0..<8).map { backoff.delay(attempt: $0, random: 0) }
        #expect(pauses == [250, 500, 1000, 2000, 4000, 5000, 5000, 5000].map { Duration.milliseconds($0) })
        #expect(backoff.delay(attempt: 1_000_000, random: 0) == .seconds(5))
    }

    @Test("jitter takes at most its fraction off a pause")
    func jitter() {
        let backoff = FollowBackoff(initial: .seconds(1), maximum: .seconds(1), jitter: 0.2)
        #expect(backoff.delay(attempt: 0, random: 0.5) == .milliseconds(900))
        #expect(backoff.delay(attempt: 0, random: 1) == .milliseconds(800))
        for _ in 0..<100 {
            let pause = backoff.delay(attempt: 3)
            #expect(pause > .milliseconds(800) && pause <= .seconds(1))
        }
    }
}
