import CoinWatchRPC
import Testing

@Suite("RPCError")
struct RPCErrorTests {
    @Test("a message over 1 KiB keeps whole characters up to the bound and says how much was cut")
    func boundedMessage() {
        #expect(RPCError(code: .internal, message: "short").message == "short")
        let exact = String(repeating: "a", count: RPCError.maxMessageBytes)
        #expect(RPCError(code: .internal, message: exact).message == exact)
        for unit in ["a", "é", "€", "🪙"] {
            let long = String(repeating: unit, count: 3000)
            let message = RPCError(code: .invalidArgument, message: long).message
            #expect(message.utf8.count <= RPCError.maxMessageBytes, "\(unit): \(message.utf8.count)")
            let kept = message.prefix { $0 != "…" }
            #expect(kept.allSatisfy { String($0) == unit } && kept.count > 200, "\(unit)")
            #expect(message.hasSuffix(" (\(long.utf8.count - kept.utf8.count) more bytes cut)"), "\(message.suffix(40))")
        }
    }

    @Test("only an UNAVAILABLE the server never started may be sent again; a refusal a new connection would meet may not")
    func maySendAgain() {
        let goingAway = RPCError(code: .unavailable, message: "the server at 127.0.0.1:1 is going away: draining")
        #expect(!goingAway.maySendAgain, "the server may have started it")
        #expect(goingAway.asNotProcessed.maySendAgain)
        #expect(goingAway.asNotProcessed.message == goingAway.message)
        let refused = RPCError(code: .failedPrecondition, message: "protocol version 7 is not supported").asNotProcessed
        #expect(refused.notProcessed)
        #expect(!refused.maySendAgain)
    }
}
