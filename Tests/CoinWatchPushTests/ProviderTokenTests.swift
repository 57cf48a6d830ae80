import Synchronization
import Testing
@testable import CoinWatchPush

/// The provider token's life: made at first use, shared, replaced at its age, one fresh token after a refusal.
struct ProviderTokenTests {
    /// Counts what it signs; the "JWT" names its claims so a test can read them back.
    final class CountingSigner: ProviderTokenSigner {
        let signed = Mutex<[Int64]>([])

        func providerToken(keyID: String, teamID: String, issuedAt: Int64) throws -> String {
            signed.withLock { $0.append(issuedAt) }
            return "\(keyID).\(teamID).\(issuedAt)"
        }

        var count: Int { signed.withLock { $0.count } }
    }

    final class WallClock: Sendable {
        let seconds = Atomic<Int64>(1_800_000_000)
    }

    func makeToken(refresh: Duration = .seconds(2400)) -> (ProviderToken, CountingSigner, WallClock) {
        let signer = CountingSigner()
        let wall = WallClock()
        let token = ProviderToken(
            keyID: "KEY", teamID: "TEAM", refresh: refresh, signer: signer,
            wallClock: { wall.seconds.load(ordering: .relaxed) })
        return (token, signer, wall)
    }

    @Test func nothingIsSignedBeforeTheFirstUse() {
        let (token, signer, _) = makeToken()
        #expect(signer.count == 0)
        #expect(token.current == nil)
    }

    @Test func oneTokenServesEveryRequestUntilItsAgeCountedFromItsFirstUse() throws {
        let (token, signer, wall) = makeToken(refresh: .seconds(2400))
        // Long after the token's owner was created: the age counts from now.
        let start = ContinuousClock.now + .seconds(10_000)
        let first = try token.token(now: start)
        #expect(first.header == "authorization: bearer KEY.TEAM.1800000000")
        #expect(first.issuedAt == wall.seconds.load(ordering: .relaxed))
        for step in 1...1000 {
            let again = try token.token(now: start + .milliseconds(step * 2000))
            #expect(again.generation == first.generation)
        }
        #expect(signer.count == 1)
        wall.seconds.add(2400, ordering: .relaxed)
        let second = try token.token(now: start + .seconds(2400))
        #expect(second.generation == first.generation + 1)
        #expect(second.issuedAt == first.issuedAt + 2400)
        #expect(!second.replacesRejected)
        #expect(signer.count == 2)
    }

    @Test func theIssuedAtIsTheWallClockSecondAtSigning() throws {
        let (token, signer, wall) = makeToken()
        wall.seconds.store(1_900_000_123, ordering: .relaxed)
        _ = try token.token(now: .now)
        #expect(signer.signed.withLock { $0 } == [1_900_000_123])
    }

    @Test func aRefusalMakesOneFreshTokenAndARefusalOfThatOnePauses() throws {
        let (token, signer, _) = makeToken()
        let now = ContinuousClock.now
        let first = try token.token(now: now)
        #expect(token.rejected(generation: first.generation, now: now) == .retry)
        // Other requests that carried the same token come back refused too: no further token for them.
        #expect(token.rejected(generation: first.generation, now: now) == .retry)
        let fresh = try token.token(now: now)
        #expect(fresh.generation == first.generation + 1)
        #expect(fresh.replacesRejected)
        #expect(signer.count == 2)
        #expect(token.rejected(generation: first.generation, now: now) == .retry)
        #expect(token.rejected(generation: fresh.generation, now: now) == .pause)
        #expect(signer.count == 2)
    }

    @Test func afterAPauseTheNextRequestTriesOneFreshToken() throws {
        let (token, signer, _) = makeToken()
        let now = ContinuousClock.now
        let first = try token.token(now: now)
        _ = token.rejected(generation: first.generation, now: now)
        let fresh = try token.token(now: now)
        #expect(token.rejected(generation: fresh.generation, now: now) == .pause)
        token.retryAfterPause()
        let probe = try token.token(now: now + .seconds(1200))
        #expect(probe.replacesRejected)
        #expect(token.rejected(generation: probe.generation, now: now) == .pause)
        #expect(signer.count == 3)
    }
}
