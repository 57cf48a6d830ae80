@testable import CoinWatchAuth
import CoinWatchLogging
import CoinWatchProto
import CoinWatchRPC
import Foundation
import Testing

@Suite("abuse limits")
struct LimitTests {
    static let second: Int64 = 1_000_000_000

    @Test("a token bucket admits its burst, then one call per 1/rate, and says how long to wait")
    func tokenBucket() {
        var bucket = TokenBucket(rate: 10, burst: 3, nowNanos: 0)
        for _ in 0..<3 { #expect(bucket.take(nowNanos: 0) == nil) }
        #expect(bucket.take(nowNanos: 0) == .milliseconds(100))
        #expect(bucket.take(nowNanos: Self.second / 20) == .milliseconds(50))
        #expect(bucket.take(nowNanos: Self.second / 10) == nil)
        #expect(bucket.take(nowNanos: Self.second / 10) != nil)
        let full = bucket.isFull(nowNanos: 10 * Self.second)
        #expect(full)
        // Time going backwards (another thread's older clock reading) adds nothing.
        #expect(bucket.take(nowNanos: 0) == nil)
    }

    @Test("rates parse as N or N/BURST")
    func rateText() {
        #expect(RateLimit(text: "20") == RateLimit(perSecond: 20, burst: 40))
        #expect(RateLimit(text: "5/50") == RateLimit(perSecond: 5, burst: 50))
        #expect(RateLimit(text: "0")?.isUnlimited == true)
        for bad in ["", "x", "-1", "5/0", "5/", "1/2/3", "inf"] { #expect(RateLimit(text: bad) == nil, "\(bad)") }
        #expect(RateLimit(perSecond: 5, burst: 50).description == "5/50")
    }

    @Test("peer addresses: IPv4 by address, IPv6 by /64, mapped IPv4 as IPv4, loopback recognised")
    func peerAddresses() {
        #expect(PeerAddress("10.1.2.3:5000").limitKey == "10.1.2.3")
        #expect(!PeerAddress("10.1.2.3:5000").isLoopback)
        #expect(PeerAddress("127.0.0.1:5000").isLoopback)
        #expect(PeerAddress("127.9.9.9:1").isLoopback)
        #expect(PeerAddress("[::1]:5000").isLoopback)
        #expect(PeerAddress("[2001:db8:1:2:3:4:5:6]:443").limitKey == "2001:db8:1:2::/64")
        #expect(PeerAddress("[2001:db8:1:2:ffff::1]:443").limitKey == "2001:db8:1:2::/64")
        #expect(PeerAddress("[::ffff:10.1.2.3]:1").limitKey == "10.1.2.3")
        #expect(PeerAddress("[::ffff:127.0.0.1]:1").isLoopback)
        #expect(PeerAddress("unknown").isLoopback)
        #expect(isLoopbackHost("127.0.0.1") && isLoopbackHost("::1") && isLoopbackHost("[::1]") && isLoopbackHost("localhost"))
        #expect(!isLoopbackHost("0.0.0.0") && !isLoopbackHost("::") && !isLoopbackHost("10.0.0.1") && !isLoopbackHost("example.org"))
    }

    @Test("connections per address: a cap on open ones and a rate of new ones; loopback peers are not counted")
    func connectionLimits() {
        let limiter = ConnectionLimiter(maxOpenPerAddress: 2, rate: RateLimit(perSecond: 1, burst: 3), capacity: 100)
        let peer = PeerAddress("10.0.0.1:1")
        #expect(limiter.admit(peer, nowNanos: 0) == nil)
        #expect(limiter.admit(PeerAddress("10.0.0.1:2"), nowNanos: 0) == nil)
        let full = limiter.admit(peer, nowNanos: 0)
        #expect(full?.code == .resourceExhausted)
        #expect(full?.message == "too many connections from 10.0.0.1 (at most 2 at once)")
        limiter.closed(peer)
        #expect(limiter.openConnections(peer) == 1)
        #expect(limiter.admit(peer, nowNanos: 0) == nil)
        limiter.closed(peer)
        limiter.closed(peer)
        // The burst of 3 is spent: the next new connection must wait a second.
        let fast = limiter.admit(peer, nowNanos: 0)
        #expect(fast?.message == "too many new connections from 10.0.0.1 (1 a second, bursts of 3); retry after 1000 ms")
        #expect(limiter.admit(peer, nowNanos: Self.second) == nil)
        // Another address has its own allowance; loopback has none to spend.
        #expect(limiter.admit(PeerAddress("10.0.0.2:1"), nowNanos: 0) == nil)
        for _ in 0..<10 { #expect(limiter.admit(PeerAddress("127.0.0.1:1"), nowNanos: 0) == nil) }
        #expect(limiter.openConnections(PeerAddress("127.0.0.1:1")) == 0)
    }

    @Test("a full table drops idle addresses and lets an address it cannot track through")
    func trackedCapacity() {
        let limiter = ConnectionLimiter(maxOpenPerAddress: 1, rate: .unlimited, capacity: 2)
        #expect(limiter.admit(PeerAddress("10.0.0.1:1"), nowNanos: 0) == nil)
        #expect(limiter.admit(PeerAddress("10.0.0.2:1"), nowNanos: 0) == nil)
        // Both tracked addresses hold a connection: the third goes untracked (and so unlimited).
        #expect(limiter.admit(PeerAddress("10.0.0.3:1"), nowNanos: 0) == nil)
        #expect(limiter.admit(PeerAddress("10.0.0.3:1"), nowNanos: 0) == nil)
        limiter.closed(PeerAddress("10.0.0.1:1"))
        // After the sweep pause, the idle address makes room and the third is tracked.
        #expect(limiter.admit(PeerAddress("10.0.0.3:1"), nowNanos: 2 * Self.second) == nil)
        #expect(limiter.admit(PeerAddress("10.0.0.3:1"), nowNanos: 2 * Self.second)?.code == .resourceExhausted)
    }

    @Test("calls per credential: a device past its rate gets RESOURCE_EXHAUSTED with a retry hint; others are unaffected")
    func requestRates() throws {
        let harness = try AuthHarness {
            $0.limits.deviceRequestRate = RateLimit(perSecond: 2, burst: 2)
            $0.limits.anonymousRequestRate = RateLimit(perSecond: 1, burst: 1)
            $0.publicPrices = true
        }
        let payload = AuthHarness.deviceRequest("phone-1")
        let method = V1.CoinWatch.getSettings.path
        #expect(harness.check(method, authorization: harness.phoneToken, payload: payload, peer: "10.0.0.1:1") == .ok)
        // The bucket belongs to the device, not to the connection or the address.
        #expect(harness.check(method, authorization: harness.phoneToken, payload: payload, peer: "10.0.0.2:1") == .ok)
        #expect(harness.check(method, authorization: harness.phoneToken, payload: payload, peer: "10.0.0.1:1") == .resourceExhausted)
        #expect(harness.check(method, authorization: harness.otherPhoneToken, payload: AuthHarness.deviceRequest("phone-2"),
                              peer: "10.0.0.1:1") == .ok)
        harness.nowNanos += Self.second
        #expect(harness.check(method, authorization: harness.phoneToken, payload: payload, peer: "10.0.0.1:1") == .ok)

        #expect(harness.check(V1.CoinWatch.getPrices.path, peer: "10.0.0.3:1") == .ok)
        let refused = harness.authorize(V1.CoinWatch.getPrices.path, peer: "10.0.0.3:2")
        #expect(throws: RPCError(
            code: .resourceExhausted,
            message: "too many calls for anonymous callers from 10.0.0.3 (1 a second, bursts of 1); retry after 1000 ms")) {
            try refused.get()
        }
        // A credential of spaces only is none: it counts against the same address's anonymous calls.
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: " ", peer: "10.0.0.3:3") == .resourceExhausted)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: " \t", peer: "10.0.0.4:1") == .ok)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: " ", peer: "10.0.0.4:2") == .resourceExhausted)
        // Keys are not limited by default; loopback anonymous callers neither.
        let key = try harness.keyToken(ScopeSet([.pricesRead]))
        for _ in 0..<50 {
            #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: key, peer: "10.0.0.1:1") == .ok)
            #expect(harness.check(V1.CoinWatch.getPrices.path, peer: "127.0.0.1:9") == .ok)
        }
    }

    @Test("failed authentications are limited per address and logged once per interval, without the secret")
    func failedAuthentications() throws {
        let directory = try TemporaryLog()
        let logger = Logger(label: "auth", level: .info, fileDescriptor: directory.fd)
        let harness = try AuthHarness(configure: {
            $0.limits.failedAuthenticationRate = RateLimit(perSecond: 1, burst: 3)
            $0.limits.failureLogInterval = .seconds(60)
        }, logger: logger)
        let forged = withWrongSecret(try harness.keyToken(ScopeSet([.admin])))
        let method = V1.CoinWatch.getPrices.path
        for _ in 0..<3 {
            #expect(harness.check(method, authorization: forged, peer: "10.9.9.9:1") == .unauthenticated)
        }
        // The burst of failures is spent: this address is held back, even with a valid key.
        let valid = try harness.keyToken(ScopeSet([.pricesRead]))
        #expect(harness.check(method, authorization: valid, peer: "10.9.9.9:2") == .resourceExhausted)
        // A value that is not a token at all is held back the same way.
        #expect(harness.check(method, authorization: "Bearer", peer: "10.9.9.9:5") == .resourceExhausted)
        #expect(harness.check(method, authorization: "Basic dTpw", peer: "10.9.9.9:6", transport: "connect") == .resourceExhausted)
        #expect(harness.check(method, authorization: valid, peer: "10.9.9.8:2") == .ok)
        harness.nowNanos += Self.second
        #expect(harness.check(method, authorization: valid, peer: "10.9.9.9:2") == .ok)
        #expect(harness.check(method, authorization: "Bearer garbage!", peer: "10.9.9.9:3") == .unauthenticated)
        var lines = directory.lines().filter { $0.contains("authentication failed") }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("peer=10.9.9.9") == true)
        #expect(lines.first?.contains("failures=1") == true)
        #expect(lines.first?.contains("reason=\"wrong secret\"") == true)
        // The next interval's first failure reports the ones the last line did not.
        harness.nowNanos += 61 * Self.second
        #expect(harness.check(method, authorization: "Bearer s3cret", peer: "10.9.9.9:4") == .unauthenticated)
        lines = directory.lines().filter { $0.contains("authentication failed") }
        #expect(lines.count == 2)
        #expect(lines.last?.contains("failures=4") == true)
        let log = directory.lines().joined(separator: "\n")
        #expect(!log.contains(String(forged.dropFirst(21))))
        #expect(!log.contains("s3cret") && !log.contains("garbage"))
    }
}

/// A file a logger writes to, read back by the test.
final class TemporaryLog {
    let path: String
    let fd: Int32

    init() throws {
        path = FileManager.default.temporaryDirectory.path + "/auth-log-\(UUID().uuidString)"
        fd = open(path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AuthError(code: .storeFailure, message: "cannot create \(path)") }
    }

    func lines() -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    deinit {
        close(fd)
        unlink(path)
    }
}
