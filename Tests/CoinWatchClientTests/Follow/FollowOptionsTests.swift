import CoinWatchClient
import CoinWatchRPC
import Testing

@Suite("follow options")
struct FollowOptionsTests {
    @Test("by default unavailable servers are retried, refused calls are not")
    func retryable() {
        let options = FollowOptions()
        #expect(options.retryable.contains(.unavailable))
        for code in [RPCError.Code.invalidArgument, .permissionDenied, .unauthenticated, .unimplemented, .notFound] {
            #expect(!options.retryable.contains(code))
        }
    }
}
