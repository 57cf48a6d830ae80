import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC
import Dispatch

/// The `coinwatch.v1.Admin` service: service keys and device secrets, managed while the server runs.
///
/// Each change is a synced LevelDB write, so the handlers run on one serial queue of their own, never on an event
/// loop; being serial, two admins' changes never interleave. The authoriser lets only keys with `admin` in.
public struct AdminMethods: Sendable {
    public let credentials: CredentialStore
    private let queue = DispatchQueue(label: "coinwatch.admin")

    public init(credentials: CredentialStore) {
        self.credentials = credentials
    }

    public var methods: [RPCMethod] {
        let credentials = self.credentials
        let queue = self.queue
        return [
            .unary(V1.Admin.createKey, deferred: { request, _, responder in
                queue.async {
                    do throws(AuthError) {
                        let scopes = try ScopeSet(names: request.scopes)
                        let (key, token) = try credentials.createKey(name: request.name, scopes: scopes)
                        responder.succeed(V1.CreateKeyResponse(key: key, token: token))
                    } catch {
                        responder.fail(error.rpcError)
                    }
                }
            }),
            .unary(V1.Admin.listKeys, inline: { request, _ throws(RPCError) in
                V1.ListKeysResponse(keys: credentials.listKeys(includeRevoked: request.includeRevoked))
            }),
            .unary(V1.Admin.revokeKey, deferred: { request, _, responder in
                queue.async {
                    do throws(AuthError) {
                        responder.succeed(V1.RevokeKeyResponse(key: try credentials.revokeKey(request.id)))
                    } catch {
                        responder.fail(error.rpcError)
                    }
                }
            }),
            .unary(V1.Admin.resetDevice, deferred: { request, _, responder in
                let device: DeviceID
                do throws(ValidationError) {
                    device = try DeviceID(validating: request.deviceID, field: "device_id")
                } catch {
                    responder.fail(RPCError(code: .invalidArgument, message: error.description))
                    return
                }
                queue.async {
                    do throws(AuthError) {
                        let (hadSecret, token) = try credentials.resetDevice(device, issueSecret: request.issueSecret)
                        responder.succeed(V1.ResetDeviceResponse(hadSecret: hadSecret, deviceSecret: token ?? ""))
                    } catch {
                        responder.fail(error.rpcError)
                    }
                }
            }),
        ]
    }
}
