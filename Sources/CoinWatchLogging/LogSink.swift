import CoinWatchCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where log lines go. One per process; the lock makes each line atomic.
final class LogSink: Sendable {
    let format: Logger.Format
    /// The descriptor written to; negative = discard.
    let fd: Int32
    private let lock = Mutex<Void>(())

    init(format: Logger.Format, fd: Int32) {
        self.format = format
        self.fd = fd
    }

    func write(level: Logger.Level, label: String, event: String, fields: KeyValuePairs<String, String>) {
        let time = Self.timestamp()
        var line: String
        switch format {
        case .text:
            line = "\(time) \(level.description.uppercased()) [\(label)] \(event)"
            for (key, value) in fields {
                line += " \(key)=\(Self.textValue(value))"
            }
        case .json:
            line = "{\"time\":\"\(time)\",\"level\":\"\(level)\",\"label\":\(JSONText.quote(label)),\"event\":\(JSONText.quote(event))"
            for (key, value) in fields {
                line += ",\(JSONText.quote(key)):\(JSONText.quote(value))"
            }
            line += "}"
        }
        line += "\n"
        lock.withLock { _ in
            line.withUTF8 { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return }
                    offset += n
                }
            }
        }
    }

    /// Text values with spaces or quotes are quoted so a line stays machine-splittable.
    static func textValue(_ value: String) -> String {
        if value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) {
            return JSONText.quote(value)
        }
        return value
    }

    /// RFC 3339 UTC with milliseconds, from the wall clock.
    static func timestamp() -> String {
        WallClock.iso8601(milliseconds: WallClock.milliseconds())
    }
}
