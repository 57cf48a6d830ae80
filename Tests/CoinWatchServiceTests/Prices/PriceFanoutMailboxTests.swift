import CoinWatchModel
import Testing
@testable import CoinWatchService

/// A loop's mailbox keeps every tick in publish order up to its limit, then conflates to the latest per symbol.
struct PriceFanoutMailboxTests {
    typealias F = PriceFixtures

    static func batch(_ symbols: [String], _ price: String) -> [PriceTick] {
        symbols.map { F.tick($0, price) }
    }

    @Test func keepsEveryTickInOrderUpToTheLimit() {
        var mailbox = FanoutMailbox()
        for version in 1...4 {
            mailbox.append(Self.batch(["BTC", "ETH"], "\(version)"), version: UInt64(version), limit: 8)
        }
        #expect(!mailbox.isConflating)
        #expect(mailbox.ticks.map(\.symbol.rawValue) == ["BTC", "ETH", "BTC", "ETH", "BTC", "ETH", "BTC", "ETH"])
        #expect(mailbox.ticks.map(\.version) == [1, 1, 2, 2, 3, 3, 4, 4])
        #expect(mailbox.ticks.map(\.price) == ["1", "1", "2", "2", "3", "3", "4", "4"].map(F.price))
    }

    @Test func pastTheLimitKeepsTheLatestTickPerSymbol() {
        var mailbox = FanoutMailbox()
        mailbox.append(Self.batch(["SOL"], "1"), version: 1, limit: 4)
        for version in 2...5 {
            mailbox.append(Self.batch(["BTC", "ETH"], "\(version)"), version: UInt64(version), limit: 4)
        }
        #expect(mailbox.isConflating)
        // The last tick of each symbol, in the order of those last ticks.
        #expect(mailbox.ticks.map(\.symbol.rawValue) == ["SOL", "BTC", "ETH"])
        #expect(mailbox.ticks.map(\.version) == [1, 5, 5])
        #expect(mailbox.ticks.map(\.price) == ["1", "5", "5"].map(F.price))

        // Conflating, later ticks replace their symbol's entry; a new symbol is added once.
        for version in 6...1_000 {
            mailbox.append(Self.batch(["ETH", "DOGE"], "\(version)"), version: UInt64(version), limit: 4)
        }
        #expect(mailbox.ticks.map(\.symbol.rawValue) == ["SOL", "BTC", "ETH", "DOGE"])
        #expect(mailbox.ticks.map(\.version) == [1, 5, 1_000, 1_000])
        #expect(mailbox.ticks.map(\.price) == ["1", "5", "1000", "1000"].map(F.price))
    }

    @Test func takingTheTicksStartsAfreshInOrder() {
        var mailbox = FanoutMailbox()
        for version in 1...10 {
            mailbox.append(Self.batch(["BTC"], "\(version)"), version: UInt64(version), limit: 4)
        }
        #expect(mailbox.isConflating)
        var taken: [MailboxTick] = []
        mailbox.take(into: &taken)
        #expect(taken.map(\.version) == [10])
        #expect(mailbox.ticks.isEmpty)
        #expect(!mailbox.isConflating)
        mailbox.append(Self.batch(["BTC", "BTC"], "11"), version: 11, limit: 4)
        #expect(mailbox.ticks.count == 2)
    }
}
