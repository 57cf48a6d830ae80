import Testing
@testable import CoinWatchFeeds

struct SequenceTrackerTests {
    @Test func gapsDuplicatesAndOutOfOrder() {
        var tracker = SequenceTracker()
        #expect(tracker.check("BTC", 10, consecutive: true) == .taken)
        #expect(tracker.check("BTC", 11, consecutive: true) == .taken)
        #expect(tracker.check("BTC", 11, consecutive: true) == .duplicate)
        #expect(tracker.check("BTC", 9, consecutive: true) == .outOfOrder)
        #expect(tracker.check("BTC", 15, consecutive: true) == .gap(missed: 3))
        #expect(tracker.check("ETH", 3, consecutive: true) == .taken)
        // Ordering-only numbers jump freely.
        #expect(tracker.check("SOL", 100, consecutive: false) == .taken)
        #expect(tracker.check("SOL", 250, consecutive: false) == .taken)
        #expect(tracker.check("SOL", 240, consecutive: false) == .outOfOrder)
    }

    @Test func aReconnectSetsABaselineButStillDropsARepeat() {
        var tracker = SequenceTracker()
        _ = tracker.check("BTC", 10, consecutive: true)
        tracker.reconnected()
        #expect(tracker.check("BTC", 10, consecutive: true) == .duplicate)
        #expect(tracker.check("BTC", 50, consecutive: true) == .taken)
        #expect(tracker.check("BTC", 52, consecutive: true) == .gap(missed: 1))
        tracker.reconnected()
        #expect(tracker.check("BTC", 5, consecutive: true) == .taken)   // the venue renumbered
    }

    @Test func heartbeatMarksRevealLostTrades() {
        var tracker = SequenceTracker()
        #expect(tracker.mark("BTC", lastNumber: 5) == 0)
        _ = tracker.check("BTC", 20, consecutive: true)
        #expect(tracker.mark("BTC", lastNumber: 20) == 0)
        #expect(tracker.mark("BTC", lastNumber: 23) == 3)
        #expect(tracker.check("BTC", 24, consecutive: true) == .taken)
    }

    @Test func aRunOfLowerNumbersIsFollowedAsARenumbering() {
        var tracker = SequenceTracker()
        _ = tracker.check("BTC", 1_000_000, consecutive: true)
        for number in 1..<UInt64(SequenceTracker.renumberAfter) {
            #expect(tracker.check("BTC", number, consecutive: true) == .outOfOrder)
        }
        #expect(tracker.check("BTC", UInt64(SequenceTracker.renumberAfter), consecutive: true) == .taken)
        #expect(tracker.check("BTC", UInt64(SequenceTracker.renumberAfter) + 1, consecutive: true) == .taken)
    }
}
