import CoinWatchLogging
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

extension PushDelivery {
    /// A RegisterDevice request, checked on the event loop.
    struct Registration: Sendable {
        var device: DeviceID
        var token: PushToken
        var environment: V1.PushEnvironment
        var topic: String
        var locale: String
    }

    /// Stores the registration (replacing the device's token and clearing a disabled state) and replies once the
    /// round's synced batch holds it; the device's waiting outbox entries are then queued for APNs.
    func register(
        _ request: Registration, reply: @escaping @Sendable (Result<V1.DeviceRegistration, RPCError>) -> Void,
        nowMs: Int64,
        _ round: inout AlertWorker.Round, outboxKeys: (DeviceID, AlertWorker.Round) -> [[UInt8]]
    ) {
        if isOn && request.environment.apns != environment {
            reply(.failure(RPCError(
                code: .failedPrecondition,
                message: "environment: this server delivers through the APNs \(environment) environment; a token from "
                    + "the \(request.environment.apns) environment cannot be reached through it")))
            return
        }
        let previous = registration(request.device, round)
        var registration = V1.DeviceRegistration(
            deviceID: request.device.rawValue, apnsToken: request.token.rawValue, environment: request.environment,
            topic: request.topic, locale: request.locale, registeredAtMs: nowMs, status: .active)
        // The delivery history belongs to the device, whatever token it has now.
        registration.delivered = previous?.delivered ?? 0
        registration.lastDeliveredAlertID = previous?.lastDeliveredAlertID ?? ""
        registration.lastDeliveredAtMs = previous?.lastDeliveredAtMs ?? 0
        round.registrations[request.device] = .some(registration)
        round.registeredHere[request.device] = .some(registration)
        round.syncWrite = true
        round.replies.append { error in
            reply(error.map { .failure($0) } ?? .success(registration))
        }
        if previous?.status == .disabled {
            logger.info("push enabled again for a device", ["device": request.device.rawValue])
        }
        trackOutbox(of: request.device, keys: outboxKeys(request.device, round), round)
    }

    /// Removes the registration; answers whether there was one once the round's batch is written.
    func unregister(_ device: DeviceID, responder: UnaryResponder<V1.UnregisterDeviceResponse>,
                    _ round: inout AlertWorker.Round) {
        let existed = registration(device, round) != nil
        if existed {
            round.registrations[device] = .some(nil)
            round.registeredHere[device] = .some(nil)
            round.syncWrite = true
        }
        round.replies.append { error in
            if let error {
                responder.fail(error)
            } else {
                responder.succeed(V1.UnregisterDeviceResponse(existed: existed))
            }
        }
    }

    /// Cluster mode: a registration another node took (nil: unregistered there), as the cluster keeps it. Applied
    /// unless this node has it already (its own, come back); the delivery history this node kept stays, and a
    /// device whose shard this node owns has its waiting outbox entries queued for the new token. Not synced: the
    /// cluster keeps it, and a start reads it from there again.
    func applyReplicated(
        _ device: DeviceID, _ replicated: V1.DeviceRegistration?, _ round: inout AlertWorker.Round,
        outboxKeys: (DeviceID, AlertWorker.Round) -> [[UInt8]]
    ) {
        let current = registration(device, round)
        guard var replicated else {
            if current != nil { round.registrations[device] = .some(nil) }
            return
        }
        if let current, current.apnsToken == replicated.apnsToken, current.environment == replicated.environment,
            current.topic == replicated.topic, current.locale == replicated.locale,
            current.registeredAtMs == replicated.registeredAtMs
        {
            return
        }
        replicated.delivered = current?.delivered ?? 0
        replicated.lastDeliveredAlertID = current?.lastDeliveredAlertID ?? ""
        replicated.lastDeliveredAtMs = current?.lastDeliveredAtMs ?? 0
        round.registrations[device] = .some(replicated)
        trackOutbox(of: device, keys: outboxKeys(device, round), round)
    }
}
