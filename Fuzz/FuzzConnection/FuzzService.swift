import CoinWatchProto
@testable import CoinWatchRPC

/// Methods of every handler shape the runtime offers, answering on the event loop so that one input always takes
/// the same path through the connection state machine. The request's device id steers a deferred call:
///
/// - `GetSettings` (inline): echoes the device id; `missing` fails NOT_FOUND.
/// - `SaveSettings` (deferred): answered inside the handler; `later` in a later loop job; `fail` with UNAVAILABLE;
///   `hold` never, so only a `Cancel`, a deadline, the connection's end or the grace after the client's
///   half-close finishes it.
/// - `DeleteSettings` (deferred): answered in a later loop job unless cancelled first; `hold` never.
/// - `StreamPrices` (loop stream): one message per requested symbol (at most 8), then OK when `only_changes` is
///   set, else open until cancelled.
/// - `StreamAlerts` (loop stream): 32 messages of 2 KiB, sent while the connection is writable and resumed when it
///   drains, to cross the high watermark; then OK.
/// - `Health/Check` (inline): SERVING.
///
/// `GetPrices` and `PublishPrices` are left out on purpose: the server answers them UNIMPLEMENTED.
enum FuzzService {
    static func methods(loop: EventLoop) -> [RPCMethod] {
        [
            .unary(V1.Health.check, inline: { _, _ in V1.HealthCheckResponse(status: .serving) }),
            .unary(V1.CoinWatch.getSettings, inline: { request, _ throws(RPCError) in
                if request.deviceID == "missing" {
                    throw RPCError(code: .notFound, message: "no settings for device 'missing'")
                }
                return V1.GetSettingsResponse(settings: V1.Settings(deviceID: request.deviceID, version: 1))
            }),
            .unary(V1.CoinWatch.saveSettings, deferred: { request, _, responder in
                let response = V1.SaveSettingsResponse(settings: V1.Settings(deviceID: request.deviceID, version: 2))
                switch request.deviceID {
                case "hold":
                    break
                case "fail":
                    responder.fail(RPCError(code: .unavailable, message: "store write failed: fuzz"))
                case "later":
                    loop.execute { responder.succeed(response) }
                default:
                    responder.succeed(response)
                }
            }),
            .unary(V1.CoinWatch.deleteSettings, deferred: { request, _, responder in
                guard request.deviceID != "hold" else { return }
                responder.onCancel {}
                loop.execute { responder.succeed(V1.DeleteSettingsResponse(existed: true)) }
            }),
            .serverStream(V1.CoinWatch.streamPrices, onLoop: { request, stream throws(RPCError) in
                for (index, symbol) in request.symbols.prefix(8).enumerated() {
                    stream.send(V1.PriceUpdate(symbol: symbol, sequence: UInt64(index + 1)))
                }
                stream.onTerminate { _ in }
                if request.onlyChanges {
                    stream.finish()
                }
            }),
            .serverStream(V1.CoinWatch.streamAlerts, onLoop: { request, stream throws(RPCError) in
                let alert = V1.Alert(id: String(repeating: "a", count: 2048), deviceID: request.deviceID)
                var remaining = 32
                func pump() {
                    while remaining > 0 && stream.isActive && stream.isWritable {
                        remaining -= 1
                        stream.send(alert)
                    }
                    guard stream.isActive else { return }
                    if remaining == 0 {
                        stream.finish()
                    } else {
                        stream.onWritable { pump() }
                    }
                }
                pump()
            }),
        ]
    }
}
