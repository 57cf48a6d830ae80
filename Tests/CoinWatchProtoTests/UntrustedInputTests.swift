import CoinWatchProto
import Foundation
import Testing

/// Targeted hostile inputs: each must give a precise error (or a correct value), never a crash.
@Suite("Untrusted input")
struct UntrustedInputTests {
    private func expectFailure<M: WireMessage>(
        _ type: M.Type, _ bytes: [UInt8], _ code: WireDecodingError.Code, field: String?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let value = try M(serializedBytes: bytes)
            Issue.record("decoded \(value) from \(bytes)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(error.typeName == M.protoName, sourceLocation: sourceLocation)
            #expect(error.fieldPath == field, "\(error)", sourceLocation: sourceLocation)
            let subject = field.map { "\(M.protoName).\($0)" } ?? M.protoName
            #expect(error.message.hasPrefix(subject + ": "), "\(error)", sourceLocation: sourceLocation)
        }
    }

    /// Tag byte of a field.
    private func tag(_ number: UInt8, _ wireType: UInt8) -> UInt8 { number << 3 | wireType }

    /// A length-delimited field with a one-byte length.
    private func field(_ number: UInt8, _ body: [UInt8]) -> [UInt8] { [tag(number, 2), UInt8(body.count)] + body }

    @Test("every proper prefix of a frame is malformed and blames the field it cuts")
    func truncation() throws {
        let frame = V1.Frame(kind: .call(V1.Call(
            callID: 300, method: "coinwatch.v1.CoinWatch/GetSettings", metadata: ["k": "v"], payload: [1, 2, 3]
        )))
        let bytes = frame.serializedBytes()
        for length in 1..<bytes.count {
            expectFailure(V1.Frame.self, Array(bytes[..<length]), .malformed, field: "call")
        }
        let call = V1.Call(callID: 1, method: "coinwatch.v1.CoinWatch/GetSettings").serializedBytes()
        expectFailure(V1.Call.self, Array(call[..<10]), .malformed, field: "method")
        expectFailure(V1.Call.self, [0x08], .malformed, field: "call_id")
        expectFailure(V1.Call.self, [0x08, 0x80, 0x80], .malformed, field: "call_id")
        expectFailure(V1.Call.self, [0x80], .malformed, field: nil)
    }

    @Test("a known field with the wrong wire type is malformed")
    func wrongWireTypes() {
        expectFailure(V1.Call.self, [tag(2, 0), 0x01], .malformed, field: "method")
        expectFailure(V1.Call.self, field(1, [0x00]), .malformed, field: "call_id")
        expectFailure(V1.Frame.self, [tag(3, 0), 0x01], .malformed, field: "call")
        expectFailure(V1.Decimal.self, [tag(1, 1)] + [UInt8](repeating: 0, count: 8), .malformed, field: "mantissa")
        expectFailure(V1.Ping.self, [tag(1, 5), 0, 0, 0, 0], .malformed, field: "payload")
        // protobuf-c accepts a bool with any wire type; the validator does not.
        expectFailure(V1.DeleteSettingsResponse.self, field(1, [0x01]), .malformed, field: "existed")
        expectFailure(V1.Frame.self, field(3, [tag(2, 0), 0x01]), .malformed, field: "call.method")
    }

    @Test("absurd length prefixes are rejected, also where protobuf-c's 32-bit arithmetic could wrap")
    func hugeLengths() {
        let payload = [UInt8](repeating: 0x61, count: 8)
        let lengths: [[UInt8]] = [
            [0xFE, 0xFF, 0xFF, 0xFF, 0x0F],  // 2^32 - 2
            [0xFF, 0xFF, 0xFF, 0xFF, 0x0F],  // 2^32 - 1
            [0x80, 0x80, 0x80, 0x80, 0x10],  // 2^32
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],  // 2^63 - 1
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // 2^64 - 1
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01],  // 11-byte varint
            [0x09],  // one more than what is left
        ]
        for length in lengths {
            expectFailure(V1.Hello.self, [tag(2, 2)] + length + payload, .malformed, field: "client_name")
            expectFailure(V1.Frame.self, [tag(3, 2)] + length + payload, .malformed, field: "call")
            expectFailure(V1.Frame.self, field(3, [tag(5, 2)] + length + payload), .malformed, field: "call.payload")
            expectFailure(V1.Hello.self, [tag(15, 2)] + length + payload, .malformed, field: "<field 15>")
        }
    }

    @Test("huge repeated counts cost what their bytes cost, and no more than the size limit allows")
    func hugeRepeatedCounts() throws {
        let emptyTick: [UInt8] = [tag(1, 2), 0x00]
        var many: [UInt8] = []
        for _ in 0..<100_000 { many += emptyTick }
        let request = try V1.PublishPricesRequest(serializedBytes: many)
        #expect(request.ticks.count == 100_000)
        #expect(request.ticks.allSatisfy { $0 == V1.Tick() })

        expectFailure(V1.PublishPricesRequest.self, many + [tag(1, 2)], .malformed, field: "ticks")
        expectFailure(V1.PublishPricesRequest.self, many + [tag(1, 2), 0x05], .malformed, field: "ticks")
        #expect(throws: WireDecodingError.self) {
            try V1.PublishPricesRequest(serializedBytes: many, maxBytes: 199_999)
        }

        let symbols = try V1.GetPricesRequest(serializedBytes: many)
        #expect(symbols.symbols == [String](repeating: "", count: 100_000))
    }

    @Test("inputs over the size limit are refused before parsing")
    func sizeLimit() throws {
        let bytes = V1.Ping(payload: [UInt8](repeating: 7, count: 100)).serializedBytes()
        do {
            _ = try V1.Ping(serializedBytes: bytes, maxBytes: 101)
            Issue.record("accepted \(bytes.count) bytes with a limit of 101")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.message == "coinwatch.v1.Ping: 102 bytes exceed the limit of 101")
            #expect(error.description == "tooLarge: coinwatch.v1.Ping: 102 bytes exceed the limit of 101")
        }
        #expect(try V1.Ping(serializedBytes: bytes, maxBytes: 102).payload.count == 100)
        #expect(WireLimits.defaultMaxMessageBytes == 4 << 20)
    }

    @Test("invalid UTF-8 in any string field is rejected, naming the field")
    func invalidUTF8() {
        let invalid: [[UInt8]] = [
            [0xC3, 0x28],  // bad continuation
            [0xC0, 0xAF],  // overlong '/'
            [0xE0, 0x80, 0xAF],  // overlong
            [0xED, 0xA0, 0x80],  // surrogate U+D800
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF8, 0x88, 0x80, 0x80, 0x80],  // 5-byte form
            [0x80],  // lone continuation
            [0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xE2, 0x82],  // truncated at the end, after ASCII
            [0xFF],
        ]
        for bad in invalid {
            expectFailure(V1.Call.self, field(2, bad), .invalidUTF8, field: "method")
            expectFailure(V1.Frame.self, field(3, field(2, bad)), .invalidUTF8, field: "call.method")
            expectFailure(V1.Call.self, field(4, field(1, bad) + field(2, [0x76])), .invalidUTF8, field: "metadata.key")
            expectFailure(
                V1.Call.self, field(4, field(1, [0x6B]) + field(2, bad)), .invalidUTF8, field: "metadata.value"
            )
            expectFailure(V1.Settings.self, field(2, field(1, bad)), .invalidUTF8, field: "rules.key")
            expectFailure(V1.GetPricesRequest.self, field(1, [0x41]) + field(1, bad), .invalidUTF8, field: "symbols")
            expectFailure(
                V1.GetSettingsResponse.self, field(1, field(1, bad)), .invalidUTF8, field: "settings.device_id"
            )
            expectFailure(V1.PublishPricesRequest.self, field(1, field(1, bad)), .invalidUTF8, field: "ticks.symbol")
        }
        do {
            _ = try V1.Call(serializedBytes: field(2, [0x41, 0xC3, 0x28]))
        } catch {
            #expect(error.message == "coinwatch.v1.Call.method: invalid UTF-8 at byte 1 of 3")
        }
    }

    @Test("a NUL inside a string is rejected instead of silently cutting the string")
    func embeddedNUL() throws {
        expectFailure(V1.Hello.self, field(2, [0x61, 0x00, 0x62]), .embeddedNUL, field: "client_name")
        expectFailure(V1.Hello.self, field(2, [0x00]), .embeddedNUL, field: "client_name")
        let long = [UInt8](repeating: 0x61, count: 20) + [0x00]
        expectFailure(V1.Hello.self, field(2, long), .embeddedNUL, field: "client_name")
        expectFailure(V1.End.self, field(3, field(1, [0x6B, 0x00])), .embeddedNUL, field: "trailers.key")
        // Bytes fields carry NULs as they are.
        #expect(try V1.Ping(serializedBytes: field(1, [0x00, 0x00])) == V1.Ping(payload: [0, 0]))
    }

    @Test("well-formed multi-byte strings pass, also at the very end of the input")
    func validUTF8() throws {
        for text in ["😀", "a😀", "€", "ß", "\u{10FFFF}", "\u{FFFD}", "\u{7F}", "12345678😀", "12345678ü"] {
            let bytes = field(2, Array(text.utf8))
            #expect(try V1.Call(serializedBytes: bytes).method == text)
        }
    }

    @Test("unknown fields of every wire type are skipped, at the top and nested")
    func unknownFields() throws {
        let call = V1.Call(callID: 5, method: "m", metadata: ["k": "v"], payload: [9])
        let unknown: [UInt8] = [tag(15, 0), 0x96, 0x01]  // varint 150
            + [0xF8, 0xFF, 0xFF, 0xFF, 0x0F, 0x01]  // field 2^29 - 1, varint
            + field(14, [0xFF, 0xFE, 0x00])  // unknown bytes are not checked as UTF-8
            + [tag(13, 5), 1, 2, 3, 4]
            + [tag(12, 1), 1, 2, 3, 4, 5, 6, 7, 8]
        let bytes = unknown + call.serializedBytes() + unknown
        #expect(try V1.Call(serializedBytes: bytes) == call)
        #expect(try V1.Frame(serializedBytes: field(3, bytes) + unknown) == V1.Frame(kind: .call(call)))
        #expect(try V1.Frame(serializedBytes: unknown) == V1.Frame())
    }

    @Test("groups, reserved wire types and field number 0 are malformed")
    func unsupportedWireTypes() {
        expectFailure(V1.Hello.self, [tag(15, 3), tag(15, 4)], .malformed, field: "<field 15>")
        expectFailure(V1.Hello.self, [tag(2, 3)], .malformed, field: "client_name")
        expectFailure(V1.Hello.self, [tag(15, 6), 0], .malformed, field: "<field 15>")
        expectFailure(V1.Hello.self, [tag(15, 7), 0], .malformed, field: "<field 15>")
        expectFailure(V1.Hello.self, [0x00, 0x00], .malformed, field: nil)
        expectFailure(V1.Hello.self, [0x80, 0x00, 0x00], .malformed, field: nil)
    }

    @Test("fields sent twice: the last scalar wins, repeated fields concatenate, the last oneof case wins")
    func lastOneWins() throws {
        let twice = V1.Cancel(callID: 1).serializedBytes() + V1.Cancel(callID: 2).serializedBytes()
        #expect(try V1.Cancel(serializedBytes: twice).callID == 2)
        // A string sent twice: protobuf-c drops the first (its allocator's `free`, which the arena's ignores).
        let named = V1.GetSettingsRequest(deviceID: "first").serializedBytes()
            + V1.GetSettingsRequest(deviceID: "second-device").serializedBytes()
        #expect(try V1.GetSettingsRequest(serializedBytes: named).deviceID == "second-device")

        // A sub-message sent twice: strings, nested messages and repeated fields merge as protobuf specifies,
        // but protobuf-c 1.4.1 does not carry proto3 scalars over from the earlier occurrence (its merge tests
        // a presence flag proto3 scalars lack). Encoders, ours included, never split a message like this.
        let first = V1.Settings(deviceID: "a", rules: ["A": V1.AlertRule()], version: 7)
        let second = V1.Settings(rules: ["B": V1.AlertRule()], updatedAtMs: 5)
        let split = V1.GetSettingsResponse(settings: first).serializedBytes()
            + V1.GetSettingsResponse(settings: second).serializedBytes()
        let merged = try #require(try V1.GetSettingsResponse(serializedBytes: split).settings)
        #expect(merged.rules == ["A": V1.AlertRule(), "B": V1.AlertRule()])
        #expect(merged.deviceID == "a")
        #expect(merged.updatedAtMs == 5)
        #expect(merged.version == 0, "protobuf-c's deviation: the earlier occurrence's scalar is dropped")

        let kinds = V1.Frame(kind: .hello(V1.Hello(protocolVersion: 1))).serializedBytes()
            + V1.Frame(kind: .ping(V1.Ping(payload: [1]))).serializedBytes()
        #expect(try V1.Frame(serializedBytes: kinds).kind == .ping(V1.Ping(payload: [1])))
    }

    @Test("a singular message sent many times is merged in memory that stays near the input's size")
    func repeatedSingularMessage() throws {
        // Each occurrence of `settings` adds a rule; protobuf-c merges every occurrence into the next, dropping the
        // earlier copy. A tree that kept the dropped copies (an arena that never frees) would hold the square of
        // the input: about 3.6 GB for these 30,000 occurrences (270 KB).
        let count = 30_000
        var bytes: [UInt8] = []
        for index in 0..<count {
            bytes += V1.GetSettingsResponse(settings: V1.Settings(rules: ["r\(index)": V1.AlertRule()])).serializedBytes()
        }
        let before = try Self.peakResidentKiB()
        let merged = try #require(try V1.GetSettingsResponse(serializedBytes: bytes).settings)
        let grown = try Self.peakResidentKiB() - before
        #expect(merged.rules.count == count)
        #expect(merged.rules["r29999"] == V1.AlertRule())
        // The process's peak: other tests running meanwhile could only raise it, and none comes near this.
        #expect(grown < 512 * 1024, "peak resident memory grew by \(grown) KiB decoding \(bytes.count) bytes")
    }

    /// The process's peak resident set (`VmHWM` in /proc/self/status), in KiB.
    static func peakResidentKiB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
    }
}

