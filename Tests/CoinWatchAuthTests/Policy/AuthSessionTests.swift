@testable import CoinWatchAuth
import CoinWatchProto
import CoinWatchRPC
import Testing

@Suite("authorisation sessions and revocation")
struct AuthSessionTests {
    @Test("the connection's credential serves calls without their own; a call's own credential wins")
    func connectionCredential() throws {
        let harness = try AuthHarness()
        let reader = try harness.keyToken(ScopeSet([.pricesRead]))
        let session = harness.authorizer.makeSession(peer: "10.0.0.1:1")
        session.setConnectionCredential(reader)
        #expect(harness.check(V1.CoinWatch.getPrices.path, session: session) == .ok)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: "", session: session) == .ok)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: harness.phoneToken, session: session) == .permissionDenied)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: "Bearer cwk_x", session: session) == .unauthenticated)
        #expect(harness.check(V1.CoinWatch.getPrices.path, session: session) == .ok)
    }

    @Test("a revoked key fails the next call on a connection that used it, and its streams' grants lapse")
    func revocation() throws {
        let harness = try AuthHarness()
        let (key, token) = try harness.store.createKey(name: "reader", scopes: ScopeSet([.pricesRead]))
        let session = harness.authorizer.makeSession(peer: "10.0.0.1:1")
        session.setConnectionCredential(token)
        let grant = try harness.authorize(V1.CoinWatch.streamPrices.path, session: session).get()
        #expect(grant.principal == .key(id: key.id, scopes: ScopeSet([.pricesRead])))
        #expect(harness.authorizer.isStillValid(grant))
        // An unrelated change of generation does not end the stream.
        _ = try harness.store.resetDevice(harness.otherPhone, issueSecret: false)
        #expect(harness.authorizer.isStillValid(grant))
        _ = try harness.store.revokeKey(key.id)
        #expect(!harness.authorizer.isStillValid(grant))
        #expect(harness.check(V1.CoinWatch.getPrices.path, session: session) == .unauthenticated)
    }

    @Test("a reset device's old secret fails at once on an open connection")
    func deviceReset() throws {
        let harness = try AuthHarness()
        let session = harness.authorizer.makeSession(peer: "10.0.0.1:1")
        session.setConnectionCredential("Bearer " + harness.phoneToken)
        let payload = AuthHarness.deviceRequest("phone-1")
        #expect(harness.check(V1.CoinWatch.getSettings.path, payload: payload, session: session) == .ok)
        _ = try harness.store.resetDevice(harness.phone, issueSecret: false)
        #expect(harness.check(V1.CoinWatch.getSettings.path, payload: payload, session: session) == .unauthenticated)
        #expect(harness.authorizer.isStillValid(.unchecked))
    }
}
