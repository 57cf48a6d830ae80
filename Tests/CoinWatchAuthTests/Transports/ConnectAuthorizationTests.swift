@testable import CoinWatchAuth
import CoinWatchConnect
import CoinWatchLogging
import CoinWatchProto
import CoinWatchRPC
import CoinWatchTestSupport
import Testing

/// The access table through the Connect protocol: the real authoriser as the dispatcher's hook, calls made the way
/// the HTTP layer makes them (`authorization` header as metadata, `transport` "connect"), and the HTTP status each
/// refusal becomes — 401 for UNAUTHENTICATED, 403 for PERMISSION_DENIED.
@Suite("authorisation over Connect", .timeLimit(.minutes(3)))
struct ConnectAuthorizationTests {
    /// @unchecked Sendable: made, used and read on the dispatcher's loop only.
    final class Recorder: ConnectHTTPResponder, @unchecked Sendable {
        var status = 0
        var body: [UInt8] = []
        var isWritable = true
        var queuedBytes = 0

        func respond(status: Int, contentType: String, headers: [(name: String, value: String)], body: UnsafeRawBufferPointer) {
            self.status = status
            self.body = Array(body)
        }

        func startStream(status: Int, headers: [(name: String, value: String)]) { self.status = status }
        func stream(_ bytes: [UInt8]) { body += bytes }
        func finish() {}
    }

    /// Every unary method of the table the schema has, answered by a handler that echoes nothing: what is
    /// checked is whether the authoriser lets the call reach it.
    static let paths = AuthorizationMatrix.rules.keys.filter { path in
        !path.hasSuffix("/StreamPrices") && !path.hasSuffix("/StreamAlerts")
            && ConnectMethods()["/" + path] != nil
    }.sorted()

    static let methods: [RPCMethod] = paths.map { path in
        .unary(WireMethod<RawPayload, RawPayload>(path: path, isClientStreaming: false, isServerStreaming: false),
               inline: { _, _ in RawPayload() })
    }

    @Test("every unary method answers every caller with the documented HTTP status")
    func matrix() async throws {
        let harness = try AuthHarness()
        let group = try EventLoopGroup(threads: 1)
        let loop = group.next()
        let dispatcher = CallDispatcher(
            methods: Self.methods, maxConcurrentCallsPerConnection: 16, maxMessageBytes: 1 << 20,
            authorizer: harness.authorizer, logger: .disabled, loops: [loop])
        let transport = dispatcher.transport("connect")
        #expect(Self.paths.count >= 10, "\(Self.paths)")
        for path in Self.paths {
            let rule = try #require(AuthorizationMatrix.rules[path])
            let headers = ["content-type": "application/proto"]
            let route = ConnectRoute.route(httpMethod: "POST", path: Substring("/" + path), query: nil,
                                           header: { headers[$0] }, methods: ConnectMethods(), maxMessageBytes: 1 << 20)
            guard case .call(let plan) = route else {
                Issue.record("\(path) was not routed")
                continue
            }
            for caller in AuthorizationMatrix.Caller.allCases {
                let token: String?
                switch caller {
                case .none: token = nil
                case .wrongKey: token = AuthorizationMatrix.unknownKey
                case .keyWithoutScope:
                    token = try harness.keyToken(ScopeSet(names: AuthorizationMatrix.scopesWithout(rule)))
                case .rightKey: token = try harness.keyToken(ScopeSet(names: [rule.scope ?? "admin"]))
                case .otherDevice: token = harness.otherPhoneToken
                case .rightDevice: token = harness.phoneToken
                }
                let metadata = token.map { ["authorization": "Bearer " + $0] } ?? [:]
                let request = AuthHarness.deviceRequest("phone-1")
                let status = await withCheckedContinuation { continuation in
                    _ = loop.execute {
                        let recorder = Recorder()
                        ConnectCallSink.start(plan, request: request, dispatcher: dispatcher, transport: transport,
                                              eventLoop: loop, metadata: metadata, peer: "10.1.2.3:40000",
                                              responder: recorder)
                        continuation.resume(returning: recorder.status)
                    }
                }
                let expected = switch AuthorizationMatrix.expected(caller, rule) {
                case .allowed: 200
                case .unauthenticated: 401
                case .permissionDenied: 403
                }
                #expect(status == expected, "\(path) with \(caller.rawValue)")
            }
        }
        await group.shutdownGracefully()
    }
}
