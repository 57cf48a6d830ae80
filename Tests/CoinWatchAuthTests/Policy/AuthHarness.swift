@testable import CoinWatchAuth
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// An authoriser over an in-memory credential store with the credentials of the test matrix: a key per scope set
/// needed, and two claimed devices.
final class AuthHarness {
    let store: CredentialStore
    let authorizer: Authorizer
    let phone = try! DeviceID(validating: "phone-1")
    let otherPhone = try! DeviceID(validating: "phone-2")
    let phoneToken: String
    let otherPhoneToken: String
    private var keyTokens: [ScopeSet: String] = [:]
    var nowNanos: Int64 = 1_000_000_000

    init(configure: (inout Authorizer.Configuration) -> Void = { _ in }, publishToken: String? = nil,
         logger: Logger = .disabled) throws {
        store = try CredentialStore(database: nil, publishToken: publishToken, clock: { 1_700_000_000_000 })
        var configuration = Authorizer.Configuration()
        configuration.mode = .required
        configure(&configuration)
        authorizer = Authorizer(configuration: configuration, credentials: store, logger: logger)
        phoneToken = try store.claim(phone, issuedBy: "SaveSettings")!
        otherPhoneToken = try store.claim(otherPhone, issuedBy: "SaveSettings")!
    }

    /// A token of a key with exactly `scopes` (made once per set).
    func keyToken(_ scopes: ScopeSet) throws -> String {
        if let token = keyTokens[scopes] { return token }
        let token = try store.createKey(name: "test", scopes: scopes).token
        keyTokens[scopes] = token
        return token
    }

    /// The outcome of one call: `.ok` when allowed, else the refusal's code.
    func check(
        _ method: String, authorization: String? = nil, payload: [UInt8] = [], hello: String = "",
        peer: String = "10.1.2.3:40000", transport: String = "native"
    ) -> RPCError.Code {
        switch authorize(method, authorization: authorization, payload: payload, hello: hello, peer: peer, transport: transport) {
        case .success: .ok
        case .failure(let error): error.code
        }
    }

    /// The authoriser's answer for one call: `authorization` as the call's metadata (or HTTP header), `hello` as
    /// the native connection's `Hello` token.
    func authorize(
        _ method: String, authorization: String? = nil, payload: [UInt8] = [], hello: String = "",
        peer: String = "10.1.2.3:40000", transport: String = "native"
    ) -> Result<Grant, RPCError> {
        let context = ServerContext(
            method: method, metadata: authorization.map { ["authorization": $0] } ?? [:], peer: peer, authToken: hello,
            transport: transport)
        return payload.withUnsafeBytes { bytes in
            Result { () throws(RPCError) in
                try authorizer.authorize(
                    CallAuthorizationRequest(method: method, context: context, payload: bytes), nowNanos: nowNanos)
            }
        }
    }

    /// A request whose field 1 is `device` (every device method's request has the device there).
    static func deviceRequest(_ device: String) -> [UInt8] {
        [0x0A, UInt8(device.utf8.count)] + Array(device.utf8)
    }
}
