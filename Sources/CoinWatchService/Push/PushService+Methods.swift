public import CoinWatchAuth
import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC
import Dispatch

extension PushService {
    /// RegisterDevice, UnregisterDevice (answered from the alert thread once durable) and GetDevice (inline). With
    /// `claims`, the registration of a device without a secret issues it one (returned once in
    /// `RegisterDeviceResponse.device_secret`), as its first save would.
    public func methods(claims: DeviceClaims? = nil) -> [RPCMethod] {
        [
            .unary(V1.CoinWatch.registerDevice, deferred: { request, context, responder in
                let checked: (device: DeviceID, token: PushToken, environment: V1.PushEnvironment)
                do throws(ValidationError) {
                    checked = try request.validated()
                } catch {
                    responder.fail(RPCError(code: .invalidArgument, message: error.description))
                    return
                }
                let registration = PushDelivery.Registration(
                    device: checked.device, token: checked.token, environment: checked.environment, topic: request.topic,
                    locale: request.locale)
                // A request that cannot be registered is refused before a secret is issued for its device.
                let claim: DeviceClaim?
                do throws(RPCError) {
                    claim = try claims?.claim(checked.device, issuedBy: "RegisterDevice", context: context)
                } catch {
                    responder.fail(error)
                    return
                }
                guard let claim, let claims else {
                    self.post(registration) { result in
                        switch result {
                        case .success(let stored): responder.succeed(V1.RegisterDeviceResponse(registration: stored))
                        case .failure(let error): responder.fail(error)
                        }
                    }
                    return
                }
                self.registerClaiming(registration, claim, claims, responder)
            }),
            .unary(V1.CoinWatch.unregisterDevice, deferred: { request, _, responder in
                let device: DeviceID
                do throws(ValidationError) {
                    device = try DeviceID(validating: request.deviceID, field: "device_id")
                } catch {
                    responder.fail(RPCError(code: .invalidArgument, message: error.description))
                    return
                }
                guard self.worker.post(.unregisterDevice(device, responder)) else {
                    responder.fail(RPCError(code: .unavailable, message: "the alert service is shutting down"))
                    return
                }
            }),
            .unary(V1.CoinWatch.getDevice, inline: { request, _ throws(RPCError) in
                let device: DeviceID
                do throws(ValidationError) {
                    device = try DeviceID(validating: request.deviceID, field: "device_id")
                } catch {
                    throw RPCError(code: .invalidArgument, message: error.description)
                }
                guard let registration = self.registry[device] else {
                    throw RPCError(code: .notFound, message: "device '\(device)' is not registered for push")
                }
                return V1.GetDeviceResponse(registration: registration)
            }),
        ]
    }

    /// Stores the claim's record (synced, and in the cluster's store first in cluster mode) on the claims queue,
    /// since that blocks, then the registration; answers with the secret once both are durable. A registration
    /// that fails takes the claim back, so a call that fails issues nothing.
    private func registerClaiming(
        _ registration: PushDelivery.Registration, _ claim: DeviceClaim, _ claims: DeviceClaims,
        _ responder: UnaryResponder<V1.RegisterDeviceResponse>
    ) {
        let credentials = claims.credentials
        let queue = claimsQueue
        queue.async {
            do throws(AuthError) {
                try credentials.storeClaim(claim)
            } catch {
                credentials.finishClaim(claim, stored: false)
                responder.fail(error.rpcError)
                return
            }
            self.post(registration) { result in
                switch result {
                case .success(let stored):
                    credentials.finishClaim(claim, stored: true)
                    // The call ended meanwhile: the secret was never sent, so the device gets it back.
                    responder.succeed(
                        encodedResponse: V1.RegisterDeviceResponse(registration: stored, deviceSecret: claim.token)
                            .serializedBytes()
                    ) { claims.takeBack(claim) }
                case .failure(let registrationError):
                    queue.async {
                        do throws(AuthError) {
                            try credentials.releaseClaim(claim)
                        } catch {
                            self.worker.logger.warning("a failed registration's device secret could not be taken back", [
                                "device": claim.device.rawValue, "reason": error.message,
                            ])
                        }
                        responder.fail(registrationError)
                    }
                }
            }
        }
    }

    /// Hands a registration to the alert thread, or fails it when the alert service is shutting down.
    private func post(
        _ registration: PushDelivery.Registration,
        reply: @escaping @Sendable (Result<V1.DeviceRegistration, RPCError>) -> Void
    ) {
        guard worker.post(.registerDevice(registration, reply)) else {
            reply(.failure(RPCError(code: .unavailable, message: "the alert service is shutting down")))
            return
        }
    }
}
