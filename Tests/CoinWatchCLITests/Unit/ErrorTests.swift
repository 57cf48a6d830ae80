@testable import CoinWatchCLI
import CoinWatchRPC
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Errors and exit statuses")
struct ErrorTests {
    @Test("each kind of failure has its documented exit status")
    func statuses() {
        #expect(CLIError(RPCError(code: .notFound, message: "x")).code.exitStatus == 1)
        #expect(CLIError.unreachable(address: "h:1", RPCError(code: .unavailable, message: "x")).code.exitStatus == 3)
        #expect(CLIError.usage("bad", "coinwatch x").code.exitStatus == 64)
        #expect(CLIError.interrupted.code.exitStatus == 130)
        #expect(CLIError.stopped(by: SIGTERM).code.exitStatus == 143)
    }

    @Test("codes name their kind; a signal's code carries the signal")
    func codes() {
        #expect(CLIError.Code.rpc.name == "rpc")
        #expect(CLIError.Code.usage.description == "usage")
        #expect(CLIError.Code.interrupted == .signal(SIGINT))
        #expect(CLIError.Code.signal(SIGTERM).name == "signal \(SIGTERM)")
        #expect(CLIError.Code.signal(SIGHUP).signal == SIGHUP)
        #expect(CLIError.Code.unreachable.signal == nil)
    }

    @Test("RPC errors read CODE: message")
    func rpcMessage() {
        let error = CLIError(RPCError(code: .notFound, message: "no settings for device 'x'"))
        #expect(error.message == "NOT_FOUND: no settings for device 'x'")
    }

    @Test("unreachable: one line with the address, the reason and what to check", arguments: [
        ("cannot connect to 127.0.0.1:7878: connect failed: Connection refused (errno 111) [127.0.0.1:7878]",
         "connection refused"),
        ("cannot connect to nohost:7878: getaddrinfo failed: Name or service not known", "name or service not known"),
        ("the server at h:1 closed the connection", "the server at h:1 closed the connection"),
    ])
    func unreachable(message: String, reason: String) {
        let error = CLIError.unreachable(address: "127.0.0.1:7878", RPCError(code: .unavailable, message: message))
        #expect(error.message == "cannot reach coinwatchd at 127.0.0.1:7878: \(reason) — is it running? (--server / COINWATCH_SERVER)")
    }

    @Test("a server without alerts gets a clear 'not available', other errors pass through")
    func alertsUnavailable() {
        let unimplemented = CLIError(RPCError(code: .unimplemented, message: "unknown method 'coinwatch.v1.CoinWatch/StreamAlerts'"))
        let mapped = StreamCommands.alertsError(unimplemented)
        #expect(mapped.message == "alerts are not available on this server (UNIMPLEMENTED: unknown method 'coinwatch.v1.CoinWatch/StreamAlerts')")
        #expect(mapped.code.exitStatus == 1)
        let other = CLIError(RPCError(code: .invalidArgument, message: "device_id: bad"))
        #expect(StreamCommands.alertsError(other) == other)
        #expect(StreamCommands.alertsError(.interrupted) == .interrupted)
    }
}
