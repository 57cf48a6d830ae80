/// Threads that show up by name in `ps -T`, `top -H` and profiles.
///
/// Foundation's `Thread.name` is not handed to the operating system on Linux, so every worker thread of the server
/// appeared as `coinwatchd`, and a profile could not tell the settings writer from the alert thread.
public enum NamedThread {
    /// Starts a detached thread named `name` (the system keeps at most 15 bytes) running `body`. Whoever needs to
    /// wait for it signals its own completion from `body`.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        Sys.spawnThread(name: name, body)
    }
}
