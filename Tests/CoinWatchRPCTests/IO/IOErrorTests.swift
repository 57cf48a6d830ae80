import CoinWatchRPC
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("IOError")
struct IOErrorTests {
    @Test("in a sentence that names the address already, the address is said once")
    func namingTheAddress() {
        let refused = IOError(errno: 111, function: "connect", detail: "127.0.0.1:7878")
        #expect(refused.description(naming: "127.0.0.1:7878") == "connect failed: Connection refused (errno 111)")
        let resolver = IOError(errno: 0, function: "getaddrinfo", detail: "nohost:7878: Name or service not known")
        #expect(resolver.description(naming: "nohost:7878") == "getaddrinfo failed: Name or service not known")
        // The resolved address of a host name says something new and stays.
        let resolved = IOError(errno: 111, function: "connect", detail: "127.0.0.1:7878")
        #expect(resolved.description(naming: "localhost:7878")
            == "connect failed: Connection refused (errno 111) [127.0.0.1:7878]")
        #expect(IOError(errno: 98, function: "bind").description(naming: "x:1") == "bind failed: Address already in use (errno 98)")
    }

    @Test("the code is read from errno, and the message is the description", arguments: [
        (ECONNRESET, IOError.Code.connectionReset),
        (ESHUTDOWN, .shutdown),
        (ETIMEDOUT, .timeout),
        (0, .unresolved),
        (ECONNREFUSED, .system),
        (EMFILE, .system),
    ] as [(Int32, IOError.Code)])
    func codes(errno: Int32, code: IOError.Code) {
        let error = IOError(errno: errno, function: "connect", detail: "127.0.0.1:1")
        #expect(error.code == code)
        #expect(error.message == error.description)
        #expect(error.isConnectionReset == (code == .connectionReset))
        #expect(error.isShutdown == (code == .shutdown))
        #expect(error.isTimeout == (code == .timeout))
    }
}
