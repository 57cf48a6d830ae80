import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A structured logger: one line per event, as text for people or JSON for
/// log pipelines, with the event's fields as key/value pairs.
///
/// The sink is shared and writes whole lines with one `write(2)` each under a
/// lock, so lines from different threads never interleave.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case trace, debug, info, notice, warning, error

        public init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
            self = level
        }

        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    /// The component that logs, e.g. `rpc` or `store`.
    public let label: String
    public let level: Level
    let sink: LogSink

    /// A logger writing to standard error.
    public init(label: String, level: Level = .info, format: Format = .text) {
        self.init(label: label, level: level, sink: LogSink(format: format, fd: 2))
    }

    /// A logger writing to `fileDescriptor` (a file or a pipe the caller owns and keeps open), for tests that read
    /// what was logged.
    public init(label: String, level: Level = .info, format: Format = .text, fileDescriptor: Int32) {
        self.init(label: label, level: level, sink: LogSink(format: format, fd: fileDescriptor))
    }

    init(label: String, level: Level, sink: LogSink) {
        self.label = label
        self.level = level
        self.sink = sink
    }

    /// A logger that drops everything (tests, embedded use).
    public static let disabled = Logger(label: "", level: .error, sink: LogSink(format: .text, fd: -1))

    /// The same sink and level under another component label.
    public func labeled(_ label: String) -> Logger { Logger(label: label, level: level, sink: sink) }

    public func isEnabled(_ level: Level) -> Bool { level >= self.level && sink.fd >= 0 }

    /// Logs `event` with `fields`; the message is built only when the level is enabled.
    public func log(_ level: Level, _ event: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        guard isEnabled(level) else { return }
        sink.write(level: level, label: label, event: event(), fields: fields())
    }

    public func trace(_ event: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.trace, event(), fields())
    }

    public func debug(_ event: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.debug, event(), fields())
    }

    public func info(_ event: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.info, event(), fields())
    }

    public func notice(_ event: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.notice, event(), fields())
    }

    public func warning(_ event: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.warning, event(), fields())
    }

    public func error(_ event: @autoclosure () -> String, _ fields: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        log(.error, event(), fields())
    }
}
