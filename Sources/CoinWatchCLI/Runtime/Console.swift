import CoinWatchCore
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What woke the UI thread: bytes typed, signals received, or another thread's `wake()`.
struct ConsoleEvents: Sendable, Hashable {
    /// Bytes read from the terminal (only when input was asked for).
    var input: [UInt8] = []
    /// Signals received since the last wait, in order (SIGINT, SIGTERM, SIGHUP, SIGWINCH).
    var signals: [Int32] = []
    /// The input reached end of file (or failed): nothing more will be typed.
    var inputClosed = false

    var isEmpty: Bool { input.isEmpty && signals.isEmpty && !inputClosed }
}

/// The one place the CLI's UI thread waits: for keys, for signals, or for a task's news.
///
/// The CLI keeps the terminal on one thread (the main one): it reads keys, draws and prints there,
/// and never shares terminal state. Network work runs in tasks that store what they learn behind a
/// lock and call `wake()`. Signals are turned into events too (their default actions are replaced
/// once at start-up), so Ctrl-C, SIGTERM and window resizes all arrive through `wait`, where the
/// code that owns the terminal can restore it before leaving.
final class Console: Sendable {
    /// The process's console; the signals it handles are taken over when it is first used.
    static let shared: Console = {
        let console = Console()
        console.takeOverSignals()
        return console
    }()

    static let handledSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGWINCH]

    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let pendingSignals = Mutex<[Int32]>([])
    /// Keys typed while a command ran, kept for the next line the shell reads.
    private let typeAhead = Mutex<[UInt8]>([])
    /// Kept so the sources stay alive as long as the process. Written only by `takeOverSignals()`, which
    /// runs once inside the initializer of `shared` before any other thread can see the console, and
    /// never read; that single write is what makes the unchecked access safe.
    private nonisolated(unsafe) var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "coinwatch.signals")

    private init() {
        var fds: [Int32] = [-1, -1]
        // pipe(2): fills fds with the read and write ends (ours to close; they live as long as the process).
        // Both are made non-blocking so a full pipe never blocks `wake()` and draining stops when empty,
        // and close-on-exec so spawned processes do not inherit them.
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        } else {
            fds = [-1, -1]
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    private func takeOverSignals() {
        // A parent may start us with these signals blocked (some process launchers block nearly all);
        // unblock them so Ctrl-C and SIGTERM always reach the code that restores the terminal. Done on
        // the main thread first thing in main, before the client starts its threads, so they inherit it.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in Self.handledSignals { sigaddset(&unblock, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        for number in Self.handledSignals {
            // The default actions (terminate, for all but SIGWINCH) are replaced by an event, so the
            // terminal is always restored by the code that changed it.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in
                pendingSignals.withLock { $0.append(number) }
                wake()
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Wakes the UI thread's `wait`; callable from any thread.
    func wake() {
        Self.poke(wakeWrite)
    }

    private static func poke(_ descriptor: Int32) {
        var byte: UInt8 = 1
        // A full pipe (EAGAIN) already guarantees a wake-up, so the result does not matter.
        _ = Glibc.write(descriptor, &byte, 1)
    }

    /// Waits until something happens or `timeout` passes (nil = no limit).
    ///
    /// With `input` set, also waits for that descriptor to be readable and returns what it reads.
    func wait(timeout: Duration?, input: Int32? = nil) -> ConsoleEvents {
        var events = ConsoleEvents()
        events.signals = pendingSignals.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        guard events.isEmpty else { return events }
        var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        if let input { descriptors.append(pollfd(fd: input, events: Int16(POLLIN), revents: 0)) }
        let milliseconds: Int32
        if let timeout {
            milliseconds = Int32(clamping: max(0, timeout.inMilliseconds))
        } else {
            milliseconds = -1
        }
        // poll(2): fills revents; returns -1 with EINTR when a signal arrives first (then just report).
        let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        if ready > 0 {
            if descriptors[0].revents != 0 { drainWakePipe() }
            if descriptors.count > 1 && descriptors[1].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = read(descriptors[1].fd, &buffer, buffer.count)
                if count > 0 {
                    events.input = Array(buffer[0..<count])
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    events.inputClosed = true
                }
            }
        }
        events.signals = pendingSignals.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        return events
    }

    /// Keeps keys typed while something else had the terminal, for whoever reads lines next.
    func stash(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        typeAhead.withLock { $0 += bytes.prefix(max(0, 4096 - $0.count)) }
    }

    /// The keys stashed so far (then forgotten).
    func takeTypeAhead() -> [UInt8] {
        typeAhead.withLock { bytes in
            defer { bytes.removeAll() }
            return bytes
        }
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(wakeRead, &buffer, buffer.count) > 0 {}
    }

    /// Runs `body` in a task and waits for it on this (UI) thread.
    ///
    /// A SIGINT, SIGTERM or SIGHUP — or, with `interruptKeys` on a raw terminal, Ctrl-C typed as a byte —
    /// cancels the task and throws `CLIError.stopped(by:)`; the task is not waited for after that, so
    /// a call stuck on a dead network cannot hold up the user.
    func run<T: Sendable>(
        interruptKeys input: Int32? = nil, _ body: @escaping @Sendable () async throws(CLIError) -> T
    ) throws(CLIError) -> T {
        let result = Mutex<Result<T, CLIError>?>(nil)
        let task = Task.detached {
            let outcome: Result<T, CLIError>
            do throws(CLIError) {
                outcome = .success(try await body())
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
            self.wake()
        }
        while true {
            if let outcome = result.withLock({ $0 }) { return try outcome.get() }
            let events = wait(timeout: nil, input: input)
            if let stop = events.signals.first(where: { $0 != SIGWINCH }) {
                task.cancel()
                throw CLIError.stopped(by: stop)
            }
            if events.input.contains(0x03) {
                task.cancel()
                throw CLIError.interrupted
            }
            stash(events.input)
        }
    }
}
