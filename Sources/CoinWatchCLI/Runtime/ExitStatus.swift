/// The exit statuses `coinwatch` promises (and lists in `coinwatch --help`), so scripts can tell a
/// server that said no from one that could not be reached and from a mistyped command.
public enum ExitStatus {
    /// The command did what it was asked.
    public static let ok: Int32 = 0
    /// The server answered with an error (its status code and message are printed).
    public static let rpcError: Int32 = 1
    /// The server could not be reached at all.
    public static let unreachable: Int32 = 3
    /// The command line was wrong (`EX_USAGE`).
    public static let usage: Int32 = 64
    /// Interrupted with Ctrl-C (128 + SIGINT, as shells report it).
    public static let interrupted: Int32 = 130
}
