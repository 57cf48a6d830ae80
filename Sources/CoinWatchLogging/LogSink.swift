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

    /// RFC 3339 UTC with milliseconds, from the realtime clock.
    static func timestamp() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let millis = Int32(spec.tv_nsec / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(millis, 3))Z"
    }
}
