import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC

extension AlertService {
    /// `StreamAlerts`: pending outbox first, then live alerts, until cancelled. INVALID_ARGUMENT for a bad
    /// `device_id`, UNAVAILABLE once the service is closing.
    public var methods: [RPCMethod] {
        [
            .serverStream(V1.CoinWatch.streamAlerts, onLoop: { request, stream throws(RPCError) in
                let device: DeviceID
                do throws(ValidationError) {
                    device = try DeviceID(validating: request.deviceID, field: "device_id")
                } catch {
                    throw RPCError(code: .invalidArgument, message: error.description)
                }
                let subscriber = AlertSubscriber(id: self.worker.nextSubscriberID(), device: device, stream: stream)
                stream.onTerminate { _ in self.worker.post(.unsubscribe(device, subscriber.id)) }
                // After `close()` nothing would ever be sent: end the call instead of leaving it open and silent.
                guard self.worker.post(.subscribe(subscriber)) else {
                    throw RPCError(code: .unavailable, message: "the alert service is shutting down")
                }
            }),
        ]
    }
}
