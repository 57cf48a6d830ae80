import CoinWatchTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Why a pseudo-terminal session could not be set up.
struct PseudoTerminalError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Runs a program on a fresh pseudo-terminal, as if a person had started it in a terminal window:
/// it is a session leader whose controlling terminal is the pty, so it gets raw mode, SIGWINCH and
/// Ctrl-C exactly as it would for real. The test types into the master side and reads the screen
/// through `TerminalScreen`.
///
/// Owned by one test; not shared between tasks.
final class PseudoTerminal {
    let master: Int32
    /// Kept open so the terminal's settings can be read after the program exits.
    let slave: Int32
    let pid: pid_t
    /// The terminal settings before the program started: what it must leave behind.
    let initialAttributes: termios
    private(set) var screen: TerminalScreen
    /// Every byte the program wrote, for checks on exact sequences.
    private(set) var output: [UInt8] = []
    private var exitStatus: Int32?

    /// `POSIX_SPAWN_SETSID` from glibc's <spawn.h> (a GNU extension Swift's Glibc module does not export).
    private static let spawnSetSID: Int32 = 0x80

    init(_ executable: URL, arguments: [String], environment: [String: String], rows: Int = 24, columns: Int = 80) throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        // openpty(3): opens a master/slave pair with the given size; both descriptors are ours to close.
        guard openpty(&master, &slave, nil, nil, &size) == 0 else {
            throw PseudoTerminalError(message: "openpty failed: \(String(cString: strerror(errno)))")
        }
        // Not inherited by other tests' children; the child gets the slave through posix_spawn below.
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        guard let name = ttyname(slave) else {
            close(master)
            close(slave)
            throw PseudoTerminalError(message: "ttyname failed")
        }
        let slavePath = String(cString: name)
        var initial = termios()
        _ = tcgetattr(slave, &initial)

        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(
                executable.path, arguments, environment: environment, flags: Self.spawnSetSID
            ) { actions in
                // In the child, after setsid(): opening the tty (without O_NOCTTY) makes it the controlling
                // terminal; then it becomes stdin, stdout and stderr.
                posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
                posix_spawn_file_actions_adddup2(&actions, 0, 1)
                posix_spawn_file_actions_adddup2(&actions, 0, 2)
            }
        } catch {
            close(master)
            close(slave)
            throw PseudoTerminalError(message: error.message)
        }
        self.master = master
        self.slave = slave
        self.pid = pid
        initialAttributes = initial
        screen = TerminalScreen(rows: rows, columns: columns)
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        close(master)
        close(slave)
    }

    /// The terminal settings of the pty (tcgetattr on the slave side).
    var attributes: termios {
        var settings = termios()
        _ = tcgetattr(slave, &settings)
        return settings
    }

    /// Types `text` (bytes as a keyboard would send them: `"\r"` for Enter, `"\u{3}"` for Ctrl-C).
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(master, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Changes the window size the way a terminal emulator does; the kernel sends SIGWINCH.
    func resize(rows: Int, columns: Int) {
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        screen.resize(rows: rows, columns: columns)
    }

    /// Reads whatever the program has written so far into the screen.
    func pump() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(master, &buffer, buffer.count)
            if count <= 0 { return }
            let chunk = Array(buffer[0..<count])
            output += chunk
            screen.feed(chunk)
        }
    }

    /// Waits (bounded) until the screen satisfies `condition`; records an issue with the screen if not.
    @discardableResult
    func waitForScreen(
        _ what: String, timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: (TerminalScreen) -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            pump()
            if condition(screen) { return true }
            if ContinuousClock.now >= deadline || hasExited {
                let tail = String(decoding: output.suffix(600), as: UTF8.self).debugDescription
                Issue.record("screen never showed \(what):\n\(screen.text)\nlast output: \(tail)", sourceLocation: sourceLocation)
                throw PseudoTerminalError(message: "timed out waiting for \(what)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until the visible text contains `text` (trailing blanks aside: the screen has no such thing).
    func waitFor(_ text: String, timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation) async throws {
        var needle = Substring(text)
        while needle.last == " " { needle = needle.dropLast() }
        try await waitForScreen("'\(text)'", timeout: timeout, sourceLocation: sourceLocation) { $0.text.contains(needle) }
    }

    private var hasExited: Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            exitStatus = Self.decode(status)
            return true
        }
        return false
    }

    /// Waits (bounded) for the program to exit and returns its status (128 + signal if killed by one).
    func waitForExit(timeout: Duration = .seconds(20)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while !hasExited {
            pump()
            if ContinuousClock.now >= deadline {
                Issue.record("the program did not exit; screen:\n\(screen.text)")
                kill(pid, SIGKILL)
                throw PseudoTerminalError(message: "no exit")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        pump()
        return exitStatus!
    }

    /// waitpid's status word: exit code, or 128 + the signal that killed the process.
    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// The output as text, escape sequences included.
    var outputText: String { String(decoding: output, as: UTF8.self) }
}

/// Compares the parts of two termios that a program changes when it goes raw.
func sameTerminalSettings(_ a: termios, _ b: termios) -> Bool {
    var a = a
    var b = b
    return a.c_iflag == b.c_iflag && a.c_oflag == b.c_oflag && a.c_cflag == b.c_cflag && a.c_lflag == b.c_lflag
        && withUnsafeBytes(of: &a.c_cc) { x in withUnsafeBytes(of: &b.c_cc) { y in x.elementsEqual(y) } }
}
