import CoinWatchProto
public import CoinWatchRPC

extension SettingsStore {
    /// The settings methods: reads answered inline on the event loop from memory,
    /// writes handed to the group-committing writer and answered from its thread.
    public var methods: [RPCMethod] {
        [
            .unary(V1.CoinWatch.getSettings, inlineBytes: { payload, _, respond throws(RPCError) in
                try self.getSettingsEncoded(serializedRequest: payload, respond: respond)
            }),
            .unary(V1.CoinWatch.saveSettings, deferred: { request, _, responder in
                self.submitSave(request) { result in
                    switch result {
                    case .success(let saved): responder.succeed(encodedResponse: saved.encodedResponse)
                    case .failure(let error): responder.fail(error)
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
