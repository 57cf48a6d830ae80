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
        let start: Int64 = 10_000 * 1_000_000_000
        let first = try token.token(now: start)
        #expect(first.header == "authorization: bearer KEY.TEAM.1800000000")
        #expect(first.issuedAt == wall.seconds.load(ordering: .relaxed))
        for step in 1...1000 {
            let again = try token.token(now: start + Int64(step) * 2_000_000_000)
            #expect(again.generation == first.generation)
        }
        #expect(signer.count == 1)
        wall.seconds.add(2400, ordering: .relaxed)
        let second = try token.token(now: start + 2400 * 1_000_000_000)
        #expect(second.generation == first.generation + 1)
        #expect(second.issuedAt == first.issuedAt + 2400)
        #expect(!second.replacesRejected)
        #expect(signer.count == 2)
    }

    @Test func theIssuedAtIsTheWallClockSecondAtSigning() throws {
        let (token, signer, wall) = makeToken()
        wall.seconds.store(1_900_000_123, ordering: .relaxed)
        _ = try token.token(now: 0)
        #expect(signer.signed.withLock { $0 } == [1_900_000_123])
    }

    @Test func aWallClockStepNeitherAgesNorRenewsTheToken() throws {
        let (token, signer, wall) = makeToken(refresh: .seconds(2400))
        let start: Int64 = 7_000 * 1_000_000_000
        let first = try token.token(now: start)
        // The wall clock jumps a day ahead, then two days back: the age runs on the monotonic clock alone.
        wall.seconds.add(86_400, ordering: .relaxed)
        #expect(try token.token(now: start + 60 * 1_000_000_000).generation == first.generation)
        wall.seconds.add(-2 * 86_400, ordering: .relaxed)
        #expect(try token.token(now: start + 2399 * 1_000_000_000).generation == first.generation)
        #expect(signer.count == 1)
        // Its replacement carries the wall clock's second at signing, whatever it did meanwhile.
        let next = try token.token(now: start + 2400 * 1_000_000_000)
        #expect(next.generation == first.generation + 1)
        #expect(next.issuedAt == first.issuedAt - 86_400)
    }

    @Test func aRefusalMakesOneFreshTokenAndARefusalOfThatOnePauses() throws {
        let (token, signer, _) = makeToken()
        let now: Int64 = 5_000_000_000
        let first = try token.token(now: now)
        #expect(token.rejected(generation: first.generation) == .retry)
        // Other requests that carried the same token come back refused too: no further token for them.
        #expect(token.rejected(generation: first.generation) == .retry)
        let fresh = try token.token(now: now)
        #expect(fresh.generation == first.generation + 1)
        #expect(fresh.replacesRejected)
        #expect(signer.count == 2)
        #expect(token.rejected(generation: first.generation) == .retry)
        #expect(token.rejected(generation: fresh.generation) == .pause)
        #expect(signer.count == 2)
    }

    @Test func afterAPauseTheNextRequestTriesOneFreshToken() throws {
        let (token, signer, _) = makeToken()
        let now: Int64 = 5_000_000_000
        let first = try token.token(now: now)
        _ = token.rejected(generation: first.generation)
        let fresh = try token.token(now: now)
        #expect(token.rejected(generation: fresh.generation) == .pause)
        token.retryAfterPause()
        let probe = try token.token(now: now + 1200 * 1_000_000_000)
        #expect(probe.replacesRejected)
        #expect(token.rejected(generation: probe.generation) == .pause)
        #expect(signer.count == 3)
    }
}
