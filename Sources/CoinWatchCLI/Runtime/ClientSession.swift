import CoinWatchClient
import CoinWatchRPC

/// A client for one server address, with the CLI's error mapping.
///
/// Connecting is done explicitly before each call, so "the server cannot be reached" (exit 3) is
/// told apart from "the server answered with an error" (exit 1). The shell keeps one session for all
/// its lines; the connection is remade by the client when it has dropped.
final class ClientSession: Sendable {
    let options: GlobalOptions
    let client: CoinWatchClient

    init(options: GlobalOptions) {
        self.options = options
        client = CoinWatchClient(configuration: options.clientConfiguration)
    }

    /// The server address as typed.
    var address: String { options.server }

    /// Connects (or reuses the connection), mapping failure to the one-line "cannot reach" error.
    @discardableResult
    func connect() async throws(CLIError) -> RPCClientConnection {
        do {
            return try await client.connect()
        } catch {
            throw CLIError.unreachable(address: address, error)
        }
    }

    /// Connects, then runs `body`; its RPC errors become exit-1 errors.
    func call<T: Sendable>(_ body: (CoinWatchClient) async throws(RPCError) -> T) async throws(CLIError) -> T {
        try await connect()
        do {
            return try await body(client)
        } catch {
            throw CLIError(error)
        }
    }
}
