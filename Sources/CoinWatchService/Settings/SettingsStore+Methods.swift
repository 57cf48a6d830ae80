public import CoinWatchAuth
import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC

extension SettingsStore {
    /// The settings methods: reads answered inline on the event loop from memory,
    /// writes handed to the group-committing writer and answered from its thread.
    ///
    /// - Parameter claims: when given, the first save of a device without a secret issues it one, returned in
    ///   `SaveSettingsResponse.device_secret` and stored in the same batch as the settings.
    public func methods(claims: DeviceClaims? = nil) -> [RPCMethod] {
        [
            .unary(V1.CoinWatch.getSettings, inlineBytes: { payload, _, respond throws(RPCError) in
                try self.getSettingsEncoded(serializedRequest: payload, respond: respond)
            }),
            .unary(V1.CoinWatch.saveSettings, deferred: { request, context, responder in
                let claim: DeviceClaim?
                do throws(RPCError) {
                    // An invalid id is reported by the save's own validation, with the others.
                    let device = try? DeviceID(validating: request.deviceID)
                    claim = try device.flatMap { device throws(RPCError) in
                        try claims?.claim(device, issuedBy: "SaveSettings", context: context)
                    }
                } catch {
                    responder.fail(error)
                    return
                }
                self.submitSave(request, attaching: claim.map { ($0.recordKey, $0.recordValue) }) { result in
                    switch result {
                    case .success(let saved):
                        guard let claim, let claims else {
                            responder.succeed(encodedResponse: saved.encodedResponse)
                            return
                        }
                        claims.credentials.finishClaim(claim, stored: true)
                        // Appending a message holding only field 2 sets that field (protobuf concatenation merges).
                        responder.succeed(encodedResponse: saved.encodedResponse
                            + V1.SaveSettingsResponse(deviceSecret: claim.token).serializedBytes())
                    case .failure(let error):
                        if let claim { claims?.credentials.finishClaim(claim, stored: false) }
                        responder.fail(error)
                    }
                }
            }),
            .unary(V1.CoinWatch.deleteSettings, deferred: { request, _, responder in
                self.delete(request) { result in
                    switch result {
                    case .success(let existed): responder.succeed(V1.DeleteSettingsResponse(existed: existed))
                    case .failure(let error): responder.fail(error)
                    }
                }
            }),
        ]
    }
}
