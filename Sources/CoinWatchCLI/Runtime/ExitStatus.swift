/// The exit statuses `coinwatch` promises (and lists in `coinwatch --help`), so scripts can tell a
/// server that said no from one that could not be reached and from a mistyped command.
enum ExitStatus {
    /// The command did what it was asked.
    static let ok: Int32 = 0
    /// The server answered with an error (its status code and message are printed).
    static let rpcError: Int32 = 1
    /// The server could not be reached at all.
    static let unreachable: Int32 = 3
    /// The command line was wrong (`EX_USAGE`).
    static let usage: Int32 = 64
    /// Interrupted with Ctrl-C (128 + SIGINT, as shells report it).
    static let interrupted: Int32 = 130
}
