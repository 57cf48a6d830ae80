import CoinWatchAuth
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// libFuzzer target: everything that reads a credential or a request's device before any handler runs.
///
/// The first input byte picks the transport's rules (bit 0: HTTP header or native value) and a method (the rest);
/// the input, up to its first NUL, is an `authorization` value and what follows a request payload. Checked:
/// parsing never crashes; a token that parses as a CoinWatch key or device secret re-encodes to exactly its text
/// (one spelling per credential); the authoriser answers every call with a status the protocol documents for it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCredentialsOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let mode = bytes[0]
    let rest = bytes.dropFirst()
    let split = rest.firstIndex(of: 0) ?? rest.endIndex
    let value = Array(rest[..<split])
    let payload = split < rest.endIndex ? Array(rest[(split + 1)...]) : []
    let source: AuthorizationValue.Source = mode & 1 == 0 ? .native : .http
    checkParsing(value, source: source)
    checkAuthorization(value, payload: payload, source: source, method: Fixture.methods[Int(mode >> 1) % Fixture.methods.count])
    return 0
}

private func checkParsing(_ value: [UInt8], source: AuthorizationValue.Source) {
    let text = String(decoding: value, as: UTF8.self)
    guard let found = try? AuthorizationValue.token(in: text, source: source) else { return }
    let token = Array(found.utf8)
    guard let first = token.first, let last = token.last, first != 0x20, first != 0x09, last != 0x20, last != 0x09 else {
        fatalError("an empty or space-bounded token came out of \(value)")
    }
    guard let credential = try? Credential(token: token) else { return }
    switch credential {
    case .serviceKey(let id, let secret):
        guard id.utf8.count == 16, secret.count == 32 else { fatalError("a key with id \(id) and \(secret.count) secret bytes") }
    case .deviceSecret(_, let secret):
        guard secret.count == 32 else { fatalError("a device secret of \(secret.count) bytes") }
    case .opaque(let opaque):
        guard opaque.elementsEqual(token) else { fatalError("an opaque token that is not its text") }
    }
    if case .opaque = credential { return }
    // One spelling per credential: what parsed is what the server would have written.
    guard Fixture.text(of: credential).utf8.elementsEqual(token) else {
        fatalError("\(String(decoding: token, as: UTF8.self)) parsed, but its credential is written differently")
    }
}

private func checkAuthorization(_ value: [UInt8], payload: [UInt8], source: AuthorizationValue.Source, method: String) {
    let authorization = String(decoding: value, as: UTF8.self)
    // The value as a call's own credential on the given transport, then as a native connection's Hello token.
    let contexts = [
        ServerContext(method: method, metadata: ["authorization": authorization], peer: "10.0.0.1:1",
                      transport: source == .native ? "native" : "grpc"),
        ServerContext(method: method, peer: "10.0.0.1:1", authToken: authorization),
    ]
    for context in contexts {
        checkAuthorization(context, payload: payload, method: method)
    }
}

private func checkAuthorization(_ context: ServerContext, payload: [UInt8], method: String) {
    let outcome: RPCError.Code = payload.withUnsafeBytes { bytes in
        do throws(RPCError) {
            try Fixture.authorizer.authorize(
                CallAuthorizationRequest(method: method, context: context, payload: bytes), nowNanos: 0)
            return .ok
        } catch {
            return error.code
        }
    }
    let allowed: Set<RPCError.Code> = [.ok, .unauthenticated, .permissionDenied, .invalidArgument, .resourceExhausted]
    guard allowed.contains(outcome) else { fatalError("\(method) answered \(outcome)") }
}

/// One credential store and authoriser for the whole run, with a device that has a secret.
private enum Fixture {
    static let methods = V1.CoinWatch.methodPaths + V1.Health.methodPaths + V1.Admin.methodPaths + ["x.Y/Z"]
    static let store: CredentialStore = {
        let store = try! CredentialStore(database: nil, publishToken: "s3cret")
        _ = try! store.claim(try! DeviceID(validating: "phone-1"), issuedBy: "fuzz")
        return store
    }()
    static let authorizer: Authorizer = {
        var configuration = Authorizer.Configuration()
        configuration.mode = .required
        configuration.limits.failedAuthenticationRate = .unlimited
        configuration.limits.deviceRequestRate = .unlimited
        return Authorizer(configuration: configuration, credentials: store)
    }()

    static func text(of credential: Credential) -> String {
        credential.tokenText
    }
}
