#if canImport(Glibc)
import Glibc
#endif

/// A remote peer's address as the limits see it: parsed from the `host:port` text a connection reports.
///
/// IPv6 peers are grouped by their /64 prefix, the block one subscriber usually gets, since a single host can
/// choose among 2^64 addresses inside it; an IPv4-mapped IPv6 address counts as its IPv4 address.
public struct PeerAddress: Sendable, Hashable, CustomStringConvertible {
    /// What limits count by: the IPv4 address, or the IPv6 /64 prefix (as text, for logs).
    public let limitKey: String
    /// 127.0.0.0/8, ::1, or an unparseable peer text ("unknown", a Unix socket): the machine's own processes,
    /// which per-address limits leave alone.
    public let isLoopback: Bool
    /// The text as given, for logs.
    public let text: String

    public init(_ text: String) {
        self.text = text
        var host = Substring(text)
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
            host = host[..<colon]
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, String(host), &v4) == 1 {
            let octets = withUnsafeBytes(of: v4) { Array($0) }
            limitKey = octets.map(String.init).joined(separator: ".")
            isLoopback = octets[0] == 127
        } else if inet_pton(AF_INET6, String(host), &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
                limitKey = bytes[12...].map(String.init).joined(separator: ".")
                isLoopback = bytes[12] == 127
            } else {
                let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
                limitKey = groups.joined(separator: ":") + "::/64"
                isLoopback = bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
            }
        } else {
            limitKey = text
            isLoopback = true
        }
    }

    public var description: String { text }
}

/// Whether a listen host names only this machine: an address in 127.0.0.0/8, `::1`, or `localhost`. Anything else,
/// including `0.0.0.0`, `::` and host names, may be reachable from elsewhere.
public func isLoopbackHost(_ host: String) -> Bool {
    var text = Substring(host)
    if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
    if text.lowercased() == "localhost" { return true }
    var v4 = in_addr()
    var v6 = in6_addr()
    if inet_pton(AF_INET, String(text), &v4) == 1 {
        return withUnsafeBytes(of: v4) { $0[0] == 127 }
    }
    if inet_pton(AF_INET6, String(text), &v6) == 1 {
        return withUnsafeBytes(of: v6) { bytes in bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1 }
    }
    return false
}
