import CoinWatchRPC
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("IOError")
struct IOErrorTests {
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
