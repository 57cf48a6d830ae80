public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A program run by a test: started with `posix_spawn`, stdin a socket it reads like a pipe, stdout and stderr
/// each drained by a thread of its own into memory.
///
/// Tests use this instead of Foundation's `Process` and `FileHandle.readabilityHandler`: those watch descriptors
/// through libdispatch's event loop, and with the test process opening and closing sockets on many threads at once
/// a watched descriptor's number could be reused before libdispatch dropped its watch — its manager thread then
/// crashed the whole test run. Blocking reads on plain threads keep no such state.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// The parent's end of the child's stdin; -1 once closed.
    private let input: Mutex<Int32>
    /// Shared with the reader threads, which must not keep `self` (and so a child that outlived its test) alive.
    private let output = Output()
    /// The exit status once reaped (see `exitStatus`).
    private let reaped = Mutex<Int32?>(nil)

    private struct Captured {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        /// Streams still open (2 until both reached end of file).
        var open = 2
    }

    private final class Output: Sendable {
        let captured = Mutex<Captured>(Captured())
    }

    /// Starts `path` with `arguments`; `environment` nil passes this process's environment on.
    public init(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let stdin = try Self.pipe()
        let stdout = try Self.pipe()
        let stderr = try Self.pipe()
        let childEnds = [stdin.read, stdout.write, stderr.write]
        let spawned: pid_t
        do {
            spawned = try Self.spawn(path, arguments, environment: environment) { actions in
                // The sockets were made close-on-exec, so no other child inherits them; dup2 clears the flag
                // on the child's copies 0, 1 and 2 only.
                posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
                posix_spawn_file_actions_adddup2(&actions, stdout.write, 1)
                posix_spawn_file_actions_adddup2(&actions, stderr.write, 2)
            }
        } catch {
            for fd in childEnds + [stdin.write, stdout.read, stderr.read] { close(fd) }
            throw error
        }
        for fd in childEnds { close(fd) }
        pid = spawned
        input = Mutex(stdin.write)
        drain(stdout.read, into: \.stdout)
        drain(stderr.read, into: \.stderr)
    }

    deinit {
        closeInput()
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: .seconds(5))
        }
    }

    /// Everything the child has written to stdout so far.
    public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    /// The same, as bytes.
    public var stdoutBytes: [UInt8] { output.captured.withLock { $0.stdout } }
    /// Everything the child has written to stderr so far.
    public var stderr: String { String(decoding: output.captured.withLock { $0.stderr }, as: UTF8.self) }

    /// Writes `bytes` to the child's stdin (ignored once the input is closed or the child is gone).
    public func write(_ bytes: [UInt8]) {
        input.withLock { fd in
            guard fd >= 0 else { return }
            var offset = 0
            while offset < bytes.count {
                // MSG_NOSIGNAL: a child that exited makes this fail with EPIPE instead of raising SIGPIPE.
                let n = bytes.withUnsafeBytes {
                    send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return }
                offset += n
            }
        }
    }

    /// Closes the child's stdin, so it reads end of file.
    public func closeInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// Sends signal `number` to the child (nothing once it has been reaped).
    public func signal(_ number: Int32) {
        guard reaped.withLock({ $0 }) == nil else { return }
        kill(pid, number)
    }

    /// The exit status once the child has exited — its exit code, or 128 + the signal that ended it, as a shell
    /// reports it — and nil while it runs. Reaps the child.
    public var exitStatus: Int32? {
        reaped.withLock { reaped in
            if let reaped { return reaped }
            var status: Int32 = 0
            // waitpid(WNOHANG): 0 while the child runs, its pid once it has exited (and is now reaped).
            guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
            // WIFSIGNALED / WTERMSIG / WEXITSTATUS, spelled out: the macros do not import.
            let signal = status & 0x7F
            reaped = signal != 0 ? 128 + signal : (status >> 8) & 0xFF
            return reaped
        }
    }

    /// Waits up to `timeout` for the child to exit and for its output to reach end of file; returns the exit
    /// status, or nil if it is still running then.
    public func wait(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while exitStatus == nil {
            guard ContinuousClock.now < deadline else { return nil }
            usleep(2_000)
        }
        // A grandchild holding the pipes open must not stall the caller beyond the deadline.
        while output.captured.withLock({ $0.open }) > 0 && ContinuousClock.now < deadline { usleep(1_000) }
        return exitStatus
    }

    /// `wait(timeout:)` for async code: the same wait, on a thread of its own, so that it holds none of the task
    /// pool's few threads.
    public func wait(timeout: Duration) async -> Int32? {
        (try? await onOwnThread { self.wait(timeout: timeout) }) ?? nil
    }

    /// Reads `fd` to end of file on a thread of its own, appending to `stream`, then closes it.
    private func drain(_ fd: Int32, into stream: any WritableKeyPath<Captured, [UInt8]> & Sendable) {
        let output = self.output
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                output.captured.withLock { $0[keyPath: stream] += buffer[..<n] }
            }
            close(fd)
            output.captured.withLock { $0.open -= 1 }
        }
        thread.start()
    }

    /// A connected pair of sockets standing in for a pipe: `socketpair` takes SOCK_CLOEXEC, so — unlike `pipe`
    /// followed by `fcntl` — no child spawned meanwhile by another thread can inherit an end and hold it open.
    private static func pipe() throws(ChildProcessError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw ChildProcessError(message: "socketpair failed: \(String(cString: strerror(errno)))")
        }
        shutdown(fds[0], Int32(SHUT_WR))
        shutdown(fds[1], Int32(SHUT_RD))
        return (fds[0], fds[1])
    }

    /// Starts `path` with every signal at its default disposition and unblocked (the test runner blocks some,
    /// and a child inherits the mask), the descriptors set up by `configure`, `environment` (nil: this
    /// process's) and any further posix_spawn `flags`.
    public static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String]?, flags: Int32 = 0,
        configure: (inout posix_spawn_file_actions_t) -> Void
    ) throws(ChildProcessError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        configure(&actions)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(flags | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        // posix_spawn(3): argv and envp are NULL-terminated arrays it only reads; the copies made here are
        // freed right after. `environ` is the C library's, passed through as is.
        var argv = ([path] + arguments).map { strdup($0) }
        argv.append(nil)
        defer { argv.forEach { free($0) } }
        var envp = (environment ?? [:]).map { strdup("\($0.key)=\($0.value)") }
        envp.append(nil)
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = environment == nil
            ? posix_spawn(&pid, path, &actions, &attributes, argv, environ)
            : posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw ChildProcessError(message: "cannot start \(path): \(String(cString: strerror(result)))")
        }
        return pid
    }
}

/// A child process that could not be started.
public struct ChildProcessError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public var description: String { message }
}
