import CoinWatchCore
import Testing

@Suite("HOST:PORT")
struct HostAndPortTests {
    @Test("names, IPv4 and bracketed IPv6 addresses read the same wherever an address is taken")
    func reads() throws {
        #expect(try HostAndPort(parsing: "localhost:7878") == HostAndPort(host: "localhost", port: 7878))
        #expect(try HostAndPort(parsing: "10.0.0.5:1") == HostAndPort(host: "10.0.0.5", port: 1))
        #expect(try HostAndPort(parsing: "[::1]:65535") == HostAndPort(host: "::1", port: 65535))
        #expect(try HostAndPort(parsing: "[::]:0", portZeroAllowed: true) == HostAndPort(host: "::", port: 0))
        #expect(try HostAndPort(parsing: "example.com", defaultPort: 443) == HostAndPort(host: "example.com", port: 443))
        #expect(try HostAndPort(parsing: "[fe80::1]", defaultPort: 80) == HostAndPort(host: "fe80::1", port: 80))
        #expect(HostAndPort(host: "::1", port: 7878).description == "[::1]:7878")
        #expect(HostAndPort(host: "h", port: 1).description == "h:1")
    }

    @Test("what is not an address is refused saying why", arguments: [
        ("nocolon", false, "'nocolon' is not HOST:PORT"),
        ("h:", false, "'h:': the port must be 1–65535 (got '')"),
        ("h:0", false, "'h:0': the port must be 1–65535 (got '0')"),
        ("h:65536", true, "'h:65536': the port must be 0–65535 (got '65536')"),
        ("h:+80", false, "'h:+80': the port must be 1–65535 (got '+80')"),
        (":80", false, "':80' has no host"),
        ("[]:80", false, "'[]:80' has no host"),
        ("[::1", false, "'[::1' opens an IPv6 address with [ and does not close it"),
        ("[::1]x", false, "'[::1]x' has 'x' after its ]"),
        ("::1:80", false, "'::1:80': an IPv6 address goes in brackets, as in [::1]:7878"),
    ])
    func refuses(text: String, portZeroAllowed: Bool, message: String) {
        #expect(throws: HostAndPort.ParseError.self) { try HostAndPort(parsing: text, portZeroAllowed: portZeroAllowed) }
        do {
            _ = try HostAndPort(parsing: text, portZeroAllowed: portZeroAllowed)
        } catch {
            #expect(error.message.hasPrefix(message), "\(error.message)")
            #expect(error.code == .invalidAddress)
        }
    }
}
