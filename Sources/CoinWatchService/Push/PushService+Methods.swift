import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC

extension PushService {
    /// RegisterDevice, UnregisterDevice (answered from the alert thread once durable) and GetDevice (inline).
    public var methods: [RPCMethod] {
        [
            .unary(V1.CoinWatch.registerDevice, deferred: { request, _, responder in
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
                guard self.worker.post(.registerDevice(registration, responder)) else {
                    responder.fail(RPCError(code: .unavailable, message: "the alert service is shutting down"))
                    return
                }
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
}
