import CoinWatchCore
import Testing
@testable import CoinWatchFeeds

/// FeedError has the one error shape (`CoinWatchError`) the service's other errors have: a code that prints its
/// name and a message for a person.
struct FeedErrorTests {
    /// The parts of any error, read through the protocol only.
    private static func shape(_ error: some CoinWatchError) -> (code: String, name: String, message: String) {
        ("\(error.code)", error.code.name, error.message)
    }

    @Test("each code prints its name, and the message is the sentence for a person")
    func codesAndMessages() {
        let cases: [(FeedError, String, String)] = [
            (FeedError(code: .invalidSpec, message: "x"), "invalid_spec", "x"),
            (FeedError(code: .tooLarge, message: "big"), "too_large", "big"),
            (FeedError(code: .tlsSetup, message: "not PEM"), "tls_setup", "not PEM"),
        ]
        for (error, name, message) in cases {
            let shape = Self.shape(error)
            #expect(shape.code == name)
            #expect(shape.name == name)
            #expect(shape.message == message)
        }
        #expect(FeedError.Code.invalidSpec == .invalidSpec)
        #expect(FeedError.Code.invalidSpec != .invalidURL)
    }
}
