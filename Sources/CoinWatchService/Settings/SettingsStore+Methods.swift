public import CoinWatchAuth
public import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC

extension SettingsStore {
    /// The settings methods: reads answered inline on the event loop from memory,
    /// writes handed to the group-committing writer and answered from its thread.
    public var methods: [RPCMethod] { methods(isPriced: { _ in true }) }

    /// The settings methods, SaveSettings warning about rules for symbols `isPriced` says were never priced
    /// (`SaveWarnings`); it is asked on the calling event loop, before the save is queued.
    ///
    /// - Parameter claims: when given, the first save of a device without a secret issues it one, returned in
    ///   `SaveSettingsResponse.device_secret` and stored in the same batch as the settings.
    public func methods(isPriced: @escaping @Sendable (Symbol) -> Bool, claims: DeviceClaims? = nil) -> [RPCMethod] {
        [
            .unary(V1.CoinWatch.getSettings, inlineBytes: { payload, _, respond throws(RPCError) in
                try self.getSettingsEncoded(serializedRequest: payload, respond: respond)
            }),
            .unary(V1.CoinWatch.saveSettings, deferred: { request, context, responder in
                // A request that cannot be saved is refused before a secret is issued for its device.
                var command: SaveCommand
                let claim: DeviceClaim?
                do throws(RPCError) {
                    command = try SaveCommand(validating: request)
                    claim = try claims?.claim(command.device, issuedBy: "SaveSettings", context: context)
                } catch {
                    responder.fail(error)
                    return
                }
                let unpriced = SaveWarnings.unpriced(in: command, isPriced: isPriced)
                command.attachedWrite = claim.map { ($0.recordKey, $0.recordValue) }
                command.call = context
                self.submitSave(command, from: context.eventLoop) { result in
                    switch result {
                    case .success(let saved):
                        var response = SaveWarnings.appending(unpriced: unpriced, to: saved.encodedResponse)
                        if let claim, let claims {
                            claims.credentials.finishClaim(claim, stored: true)
                            // A message holding only the secret, appended: protobuf concatenation merges it in.
                            response += V1.SaveSettingsResponse(deviceSecret: claim.token).serializedBytes()
                            // The call ended while its save was being written: the secret was never sent, so the
                            // device gets it back rather than keep one nobody holds (the settings stay saved).
                            responder.succeed(encodedResponse: response) { claims.takeBack(claim) }
                            return
                        }
                        responder.succeed(encodedResponse: response)
                    case .failure(let error):
                        if let claim, let claims {
                            if self.isReplicated {
                                // Cluster mode writes the claim's record to the cluster before the settings, so an
                                // attempt of the round may have created it before the save failed (a conflict, then
                                // the call ended): take it back wherever it went.
                                claims.takeBack(claim)
                            } else {
                                // The record rides in the settings' batch, so a failed save wrote none of it.
                                claims.credentials.finishClaim(claim, stored: false)
                            }
                        }
                        responder.fail(error)
                    }
                }
            }),
            .unary(V1.CoinWatch.deleteSettings, deferred: { request, context, responder in
                self.submitDelete(request, from: context.eventLoop) { result in
                    switch result {
                    case .success(let existed): responder.succeed(V1.DeleteSettingsResponse(existed: existed))
                    case .failure(let error): responder.fail(error)
                    }
                }
            }),
        ]
    }
}
