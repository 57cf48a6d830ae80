public import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC

extension SettingsStore {
    /// The settings methods: reads answered inline on the event loop from memory,
    /// writes handed to the group-committing writer and answered from its thread.
    public var methods: [RPCMethod] { methods(isPriced: { _ in true }) }

    /// The settings methods, SaveSettings warning about rules for symbols `isPriced` says were never priced
    /// (`SaveWarnings`); it is asked on the calling event loop, before the save is queued.
    public func methods(isPriced: @escaping @Sendable (Symbol) -> Bool) -> [RPCMethod] {
        [
            .unary(V1.CoinWatch.getSettings, inlineBytes: { payload, _, respond throws(RPCError) in
                try self.getSettingsEncoded(serializedRequest: payload, respond: respond)
            }),
            .unary(V1.CoinWatch.saveSettings, deferred: { request, _, responder in
                let warnings = SaveWarnings.unpriced(in: request, isPriced: isPriced)
                self.submitSave(request) { result in
                    switch result {
                    case .success(let saved):
                        responder.succeed(encodedResponse: SaveWarnings.appending(warnings, to: saved.encodedResponse))
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
