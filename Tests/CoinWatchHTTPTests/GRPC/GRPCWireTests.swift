import Testing
@testable import CoinWatchHTTP

@Suite struct GRPCWireTests {
    @Test("grpc-timeout: units, saturation, malformed values")
    func timeouts() {
        #expect(GRPCWire.timeoutNanos("300m") == 300_000_000)
        #expect(GRPCWire.timeoutNanos("2S") == 2_000_000_000)
        #expect(GRPCWire.timeoutNanos("1H") == 3_600_000_000_000)
        #expect(GRPCWire.timeoutNanos("5u") == 5_000)
        #expect(GRPCWire.timeoutNanos("0n") == 1)
        #expect(GRPCWire.timeoutNanos("99999999H") == Int64.max)
        for bad in ["", "m", "10", "10x", "123456789S", "-1S", "1.5S"] {
            #expect(GRPCWire.timeoutNanos(bad) == nil, "\(bad)")
        }
    }

    @Test("grpc-message: printable ASCII stays, the rest and % are percent-encoded")
    func percentEncoding() {
        #expect(GRPCWire.percentEncoded("no settings for 'x'") == "no settings for 'x'")
        #expect(GRPCWire.percentEncoded("100% – done\n") == "100%25 %E2%80%93 done%0A")
    }

    @Test("messages are split from the body however it arrives, and checked before buffering")
    func messageReader() {
        let body: [UInt8] = [0, 0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 9]
        for chunk in 1...body.count {
            var reader = GRPCMessageReader(maxMessageBytes: 16)
            var messages: [[UInt8]] = []
            var start = 0
            while start < body.count {
                let end = min(body.count, start + chunk)
                Array(body[start..<end]).withUnsafeBytes { bytes in reader.append(bytes) { messages.append(Array($0)) } }
                start = end
            }
            #expect(messages == [[1, 2, 3], [], [9]])
            #expect(!reader.isInsideMessage && reader.failure == nil)
        }
        var reader = GRPCMessageReader(maxMessageBytes: 16)
        ([0, 0, 0, 1, 0] as [UInt8]).withUnsafeBytes { bytes in reader.append(bytes) { _ in Issue.record("no message expected") } }
        #expect(reader.failure == .tooLarge(256))
        var compressed = GRPCMessageReader(maxMessageBytes: 16)
        ([1, 0, 0, 0, 1, 7] as [UInt8]).withUnsafeBytes { bytes in compressed.append(bytes) { _ in Issue.record("no message expected") } }
        #expect(compressed.failure == .compressed)
    }

    @Test("a prefix read a byte at a time keeps all four length bytes and the flag")
    func prefixByteByByte() {
        var reader = GRPCMessageReader(maxMessageBytes: 1 << 24)
        for byte: UInt8 in [0, 0x01, 0x02, 0x03, 0x04] {
            #expect(reader.failure == nil)
            [byte].withUnsafeBytes { bytes in reader.append(bytes) { _ in Issue.record("no message expected") } }
        }
        #expect(reader.failure == .tooLarge(0x0102_0304))
        var flagged = GRPCMessageReader(maxMessageBytes: 16)
        for byte: UInt8 in [0x80, 0, 0, 0, 1] {
            [byte].withUnsafeBytes { bytes in flagged.append(bytes) { _ in Issue.record("no message expected") } }
        }
        #expect(flagged.failure == .badFlag(0x80))
        var partial = GRPCMessageReader(maxMessageBytes: 16)
        ([0, 0] as [UInt8]).withUnsafeBytes { bytes in partial.append(bytes) { _ in Issue.record("no message expected") } }
        #expect(partial.isInsideMessage && partial.failure == nil)
    }
}
