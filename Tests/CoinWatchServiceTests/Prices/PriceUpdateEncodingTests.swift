import CoinWatchModel
import CoinWatchProto
import Testing
import CoinWatchRPC
@testable import CoinWatchService

/// The hand-written shared payload plus suffix decodes, through the generated decoder, to the message meant.
struct PriceUpdateEncodingTests {
    typealias F = PriceFixtures

    static let cases: [(String, String, Int64, UInt64)] = [
        ("BTC", "64250.5", 1_700_000_000_000, 1),
        ("DOGE", "0.16235", 0, 127),
        ("ETH", "3450", -1, 128),
        ("SHIB", "0.000000000000000001", Int64.max, UInt64.max),
        ("ABCDEFGHIJ", "9223372036854775807", 1, 300),
    ]

    @Test(arguments: 0..<5)
    func sharedPayloadAndSuffixDecodeToTheUpdate(_ index: Int) throws {
        let (symbol, price, time, sequence) = Self.cases[index]
        let payload = PriceUpdateEncoding.payload(symbol: F.symbol(symbol), price: F.price(price), sourceTimeMs: time)
        var bytes = payload.bytes
        withUnsafeTemporaryAllocation(byteCount: PriceUpdateEncoding.maxSuffixBytes, alignment: 1) { suffix in
            let count = PriceUpdateEncoding.writeSequence(sequence, into: suffix)
            bytes += UnsafeRawBufferPointer(rebasing: suffix[..<count])
        }
        let decoded = try V1.PriceUpdate(serializedBytes: bytes)
        #expect(decoded == V1.PriceUpdate(
            symbol: symbol, price: F.wire(price), sourceTimeMs: time, sequence: sequence))
        // Without the suffix the payload is the same message with no sequence.
        #expect(try V1.PriceUpdate(serializedBytes: payload.bytes).sequence == 0)
        let generated = V1.PriceUpdate(symbol: symbol, price: F.wire(price), sourceTimeMs: time).serializedBytes()
        #expect(payload.bytes == generated)
    }

    @Test(arguments: [(UInt32(0), true), (1, false), (3, true), (UInt32.max, false), (200, true)])
    func staleAndSourcesDecodeThroughTheGeneratedDecoder(_ sources: UInt32, _ stale: Bool) throws {
        let payload = PriceUpdateEncoding.payload(
            symbol: F.symbol("BTC"), price: F.price("64250.5"), sourceTimeMs: 5, sources: sources, stale: stale)
        let decoded = try V1.PriceUpdate(serializedBytes: payload.bytes)
        #expect(decoded == V1.PriceUpdate(
            symbol: "BTC", price: F.wire("64250.5"), sourceTimeMs: 5, stale: stale, sources: sources))
        #expect(payload.count == PriceUpdateEncoding.payloadSize(
            symbol: F.symbol("BTC"), price: F.price("64250.5"), sourceTimeMs: 5, sources: sources, stale: stale))
    }
}
