import CoinWatchAlertEngine
import CoinWatchCore
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC
import CoinWatchStore
import Testing
@testable import CoinWatchService

/// Every error type the service can meet has the one shape (`CoinWatchError`): a code that prints its name and a
/// message for a person, so logs and replies can treat any of them alike.
@Suite("Error shape")
struct ErrorShapeTests {
    /// The parts of any error, read through the protocol only.
    private static func shape(_ error: some CoinWatchError) -> (code: String, name: String, message: String) {
        ("\(error.code)", error.code.name, error.message)
    }

    @Test("each error's code prints its name, and its message is the sentence for a person")
    func shapes() throws {
        let cases: [((code: String, name: String, message: String), String, String)] = [
            (Self.shape(StoreError(code: .corruption, message: "bad")), "corruption", "bad"),
            (Self.shape(RPCError(code: .notFound, message: "none")), "NOT_FOUND", "none"),
            (
                Self.shape(WireDecodingError(code: .malformed, typeName: "coinwatch.v1.Frame", message: "m")),
                "malformed", "m"
            ),
            (Self.shape(ValidationError(field: "device_id", rule: "is required")), "invalidField", "device_id: is required"),
            (Self.shape(AlertEngineError(code: .invalidPrice, message: "p")), "invalid price", "p"),
            (Self.shape(DecimalArithmeticError(code: .overflow, message: "o")), "overflow", "o"),
            (
                Self.shape(DecimalParseError(text: "1e3", reason: "an exponent")), "notADecimal",
                "'1e3' is not a decimal number: an exponent"
            ),
        ]
        for (shape, code, message) in cases {
            #expect(shape.code == code)
            #expect(shape.name == code)
            #expect(shape.message == message)
        }
    }

    @Test("codes compare by kind")
    func equality() {
        #expect(StoreError.Code.closed == .closed)
        #expect(StoreError.Code.closed != .corruption)
        #expect(RPCError.Code(rawValue: 5) == .notFound)
        #expect(RPCError.Code(rawValue: 42).name == "CODE_42")
    }
}
