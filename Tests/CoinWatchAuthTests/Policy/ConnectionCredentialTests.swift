@testable import CoinWatchAuth
import CoinWatchProto
import CoinWatchRPC
import Testing

@Suite("credentials of connections and revocation")
struct ConnectionCredentialTests {
    @Test("the connection's Hello token serves calls without their own; a call's own credential wins")
    func connectionCredential() throws {
        let harness = try AuthHarness()
        let reader = try harness.keyToken(ScopeSet([.pricesRead]))
        #expect(harness.check(V1.CoinWatch.getPrices.path, hello: reader) == .ok)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: "", hello: reader) == .ok)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: harness.phoneToken, hello: reader) == .permissionDenied)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: "Bearer cwk_x", hello: reader) == .unauthenticated)
        #expect(harness.check(V1.CoinWatch.getPrices.path, hello: "Bearer " + reader) == .ok)
    }

    @Test("an HTTP transport takes only 'Bearer <token>' in its authorization header")
    func httpTransports() throws {
        let harness = try AuthHarness()
        let reader = try harness.keyToken(ScopeSet([.pricesRead]))
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: "Bearer " + reader, transport: "grpc") == .ok)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: "bearer  " + reader, transport: "connect") == .ok)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: reader, transport: "grpc") == .unauthenticated)
    }

    @Test("a revoked key fails the next call that carries it, and the grants of its streams lapse")
    func revocation() throws {
        let harness = try AuthHarness()
        let (key, token) = try harness.store.createKey(name: "reader", scopes: ScopeSet([.pricesRead]))
        let grant = try harness.authorize(V1.CoinWatch.streamPrices.path, hello: token).get()
        #expect(grant.principal == .key(id: key.id, scopes: ScopeSet([.pricesRead])))
        // Checked again: from the cache this time.
        #expect(harness.check(V1.CoinWatch.getPrices.path, hello: token) == .ok)
        #expect(harness.authorizer.isStillValid(grant))
        // An unrelated change of generation does not end the stream.
        _ = try harness.store.resetDevice(harness.otherPhone, issueSecret: false)
        #expect(harness.authorizer.isStillValid(grant))
        _ = try harness.store.revokeKey(key.id)
        #expect(!harness.authorizer.isStillValid(grant))
        #expect(harness.check(V1.CoinWatch.getPrices.path, hello: token) == .unauthenticated)
    }

    @Test("a reset device's old secret fails at once, even though it was checked before")
    func deviceReset() throws {
        let harness = try AuthHarness()
        let payload = AuthHarness.deviceRequest("phone-1")
        #expect(harness.check(V1.CoinWatch.getSettings.path, payload: payload, hello: "Bearer " + harness.phoneToken) == .ok)
        _ = try harness.store.resetDevice(harness.phone, issueSecret: false)
        #expect(harness.check(V1.CoinWatch.getSettings.path, payload: payload, hello: "Bearer " + harness.phoneToken) == .unauthenticated)
        #expect(harness.authorizer.isStillValid(.unchecked))
    }
}
