@testable import CoinWatchAuth
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Testing

/// Every method against every kind of caller, with authorisation required: the table `docs/SECURITY.md` promises.
@Suite("authorisation matrix")
struct AuthorizerMatrixTests {
    @Test("each method answers each caller as documented", arguments: AuthorizationMatrix.Caller.allCases)
    func matrix(_ caller: AuthorizationMatrix.Caller) throws {
        // The limits have tests of their own; here every refusal must be the policy's.
        let harness = try AuthHarness { $0.limits.failedAuthenticationRate = .unlimited }
        for (path, rule) in AuthorizationMatrix.rules {
            let token: String?
            switch caller {
            case .none: token = nil
            case .wrongKey: token = AuthorizationMatrix.unknownKey
            case .keyWithoutScope:
                token = try harness.keyToken(try ScopeSet(names: AuthorizationMatrix.scopesWithout(rule)))
            case .rightKey: token = try harness.keyToken(try ScopeSet(names: [rule.scope ?? "admin"]))
            case .otherDevice: token = harness.otherPhoneToken
            case .rightDevice: token = harness.phoneToken
            }
            let payload = AuthHarness.deviceRequest("phone-1")
            let want: RPCError.Code = switch AuthorizationMatrix.expected(caller, rule) {
            case .allowed: .ok
            case .unauthenticated: .unauthenticated
            case .permissionDenied: .permissionDenied
            }
            for authorization in [token.map { "Bearer \($0)" }, token] {
                #expect(harness.check(path, authorization: authorization, payload: payload) == want, "\(path) with \(caller.rawValue)")
            }
        }
    }

    @Test("every method the policy names has a rule, and a method without one is refused to everyone")
    func everyMethodHasARule() throws {
        let policy = MethodPolicy.coinWatch(publicPrices: false)
        for path in V1.CoinWatch.methodPaths + V1.Health.methodPaths + V1.Admin.methodPaths {
            #expect(policy.rule(for: path) != nil, "\(path)")
            #expect(AuthorizationMatrix.rules[path] != nil, "\(path) is missing from the documented table")
        }
        for (path, rule) in AuthorizationMatrix.rules {
            switch policy.rule(for: path) {
            case .open?: #expect(rule.scope == nil, "\(path)")
            case .scope(let scope, _)?: #expect(rule.scope == scope.rawValue && !rule.isDeviceMethod, "\(path)")
            case .device(let scope, _, _)?: #expect(rule.scope == scope.rawValue && rule.isDeviceMethod, "\(path)")
            case nil: Issue.record("\(path) has no rule")
            }
        }
        let harness = try AuthHarness()
        let admin = try harness.keyToken(ScopeSet(Scope.allCases))
        #expect(harness.check("coinwatch.v1.CoinWatch/Unlisted", authorization: admin) == .permissionDenied)
        #expect(harness.check("coinwatch.v1.CoinWatch/Unlisted") == .unauthenticated)
    }

    @Test("a device secret works for its device in any spelling of the id, and for no other device")
    func deviceSpellings() throws {
        let harness = try AuthHarness()
        let uuid = try DeviceID(validating: "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
        let token = try #require(try harness.store.claim(uuid, issuedBy: "SaveSettings"))
        for spelling in ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
                         "3f2504e0_4f89_11d3_9a0c_0305e82c3301"] {
            #expect(harness.check(V1.CoinWatch.getSettings.path, authorization: token,
                                  payload: AuthHarness.deviceRequest(spelling)) == .ok, "\(spelling)")
        }
        #expect(harness.check(V1.CoinWatch.getSettings.path, authorization: token,
                              payload: AuthHarness.deviceRequest("3f2504e0-4f89-11d3-9a0c-0305e82c3302")) == .permissionDenied)
        // The last occurrence of the field is the one a decoder keeps, and so the one checked.
        let twice = AuthHarness.deviceRequest("3f2504e0-4f89-11d3-9a0c-0305e82c3301") + AuthHarness.deviceRequest("phone-1")
        #expect(harness.check(V1.CoinWatch.getSettings.path, authorization: token, payload: twice) == .permissionDenied)
        #expect(harness.check(V1.CoinWatch.getSettings.path, authorization: harness.phoneToken, payload: twice) == .ok)
    }

    @Test("a device call whose request names no valid device is INVALID_ARGUMENT for a device secret")
    func badDeviceField() throws {
        let harness = try AuthHarness()
        for payload: [UInt8] in [[], [0x0A, 0x05, 0x61], AuthHarness.deviceRequest("not a device"), [0x0B]] {
            #expect(harness.check(V1.CoinWatch.getSettings.path, authorization: harness.phoneToken, payload: payload)
                == .invalidArgument)
        }
        // A key with the scope does not depend on the device: the handler reports the bad request itself.
        let key = try harness.keyToken(ScopeSet([.settingsRead]))
        #expect(harness.check(V1.CoinWatch.getSettings.path, authorization: key, payload: [0x0B]) == .ok)
        // Fields other than the device's are stepped over, whatever their wire type.
        let mixed: [UInt8] = [0x10, 0x96, 0x01, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x25, 1, 2, 3, 4] + AuthHarness.deviceRequest("phone-1")
        #expect(harness.check(V1.CoinWatch.getSettings.path, authorization: harness.phoneToken, payload: mixed) == .ok)
    }

    @Test("an anonymous caller may claim a device without a secret with SaveSettings or RegisterDevice, nothing else")
    func trustOnFirstUse() throws {
        let harness = try AuthHarness()
        let fresh = AuthHarness.deviceRequest("new-phone")
        #expect(harness.check(V1.CoinWatch.saveSettings.path, payload: fresh) == .ok)
        #expect(harness.check(MethodPolicy.registerDevicePath, payload: fresh) == .ok)
        #expect(harness.check(V1.CoinWatch.getSettings.path, payload: fresh) == .unauthenticated)
        #expect(harness.check(V1.CoinWatch.deleteSettings.path, payload: fresh) == .unauthenticated)
        #expect(harness.check(V1.CoinWatch.streamAlerts.path, payload: fresh) == .unauthenticated)
        #expect(harness.check(V1.CoinWatch.saveSettings.path, payload: AuthHarness.deviceRequest("phone-1")) == .unauthenticated)
        #expect(harness.check(V1.CoinWatch.saveSettings.path, payload: AuthHarness.deviceRequest("bad id!")) == .invalidArgument)
    }

    @Test("--public-prices opens price reads, and only them, to anonymous callers")
    func publicPrices() throws {
        let harness = try AuthHarness { $0.publicPrices = true }
        #expect(harness.check(V1.CoinWatch.getPrices.path) == .ok)
        #expect(harness.check(V1.CoinWatch.streamPrices.path) == .ok)
        #expect(harness.check(V1.CoinWatch.publishPrices.path) == .unauthenticated)
        #expect(harness.check(V1.CoinWatch.getSettings.path, payload: AuthHarness.deviceRequest("phone-1")) == .unauthenticated)
        // A credential that is not valid is refused even where none is needed.
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: "cwk_nope") == .unauthenticated)
    }

    @Test("with authorisation off everything is allowed, except PublishPrices when a publish token is set")
    func authOff() throws {
        let open = try AuthHarness { $0.mode = .off }
        for path in AuthorizationMatrix.rules.keys {
            #expect(open.check(path, payload: AuthHarness.deviceRequest("phone-1")) == .ok)
        }
        let withToken = try AuthHarness(configure: { $0.mode = .off }, publishToken: "s3cret")
        let publish = V1.CoinWatch.publishPrices.path
        #expect(withToken.check(publish) == .unauthenticated)
        #expect(withToken.check(publish, authorization: "wrong") == .unauthenticated)
        #expect(withToken.check(publish, authorization: "s3cret") == .ok)
        #expect(withToken.check(publish, authorization: "Bearer s3cret") == .ok)
        #expect(withToken.check(publish, authorization: try withToken.keyToken(ScopeSet([.pricesPublish]))) == .ok)
        #expect(withToken.check(publish, authorization: try withToken.keyToken(ScopeSet([.pricesRead]))) == .permissionDenied)
        #expect(withToken.check(V1.CoinWatch.getSettings.path, payload: AuthHarness.deviceRequest("phone-1")) == .ok)
    }

    @Test("the publish token keeps working as a key with prices:publish when authorisation is required")
    func publishTokenRequired() throws {
        let harness = try AuthHarness(publishToken: "s3cret")
        #expect(harness.check(V1.CoinWatch.publishPrices.path, authorization: "s3cret") == .ok)
        #expect(harness.check(V1.CoinWatch.getPrices.path, authorization: "s3cret") == .permissionDenied)
    }
}
