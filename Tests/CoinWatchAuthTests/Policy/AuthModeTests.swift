import CoinWatchAuth
import Testing

@Suite("auth mode resolution")
struct AuthModeTests {
    @Test("an exposed listener without --auth is refused, naming each address as an operator writes it")
    func exposedListener() throws {
        let error = #expect(throws: AuthModeError.self) {
            _ = try AuthMode.resolve(requested: nil, listenHosts: ["127.0.0.1", "::", "0.0.0.0", "::1"])
        }
        #expect(error?.exposedHosts == ["::", "0.0.0.0"])
        #expect(error?.message.hasPrefix("refusing to start: listening on [::], 0.0.0.0 without --auth") == true)
    }

    @Test("loopback listeners run with authorisation off; a requested mode is kept")
    func loopbackAndRequested() throws {
        #expect(try AuthMode.resolve(requested: nil, listenHosts: ["127.0.0.1", "::1", "localhost"]) == .off)
        #expect(try AuthMode.resolve(requested: .required, listenHosts: ["127.0.0.1"]) == .required)
        #expect(try AuthMode.resolve(requested: .off, listenHosts: ["0.0.0.0"]) == .off)
    }
}
