import CoinWatchProto

/// libFuzzer target: every message decoder of the schema.
///
/// The first input byte picks the message type (modulo the number of types), the rest is handed to that type's
/// decoder as untrusted bytes. A decoder must either throw a `WireDecodingError` that names its type, or return a
/// value whose encoding decodes back to the same value and re-encodes to the same bytes. The JSON written
/// straight from the bytes (`json(fromBinary:)`) must be the decoded value's, or the same error. Anything else
/// (a crash, a sanitizer report, a broken round trip, JSON that differs) is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMessagesOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let types = V1.messageTypes
    let type = types[Int(data[0]) % types.count]
    let bytes = UnsafeRawBufferPointer(start: data + 1, count: size - 1)
    check(type, bytes)
    if let type = type as? any JSONMessage.Type { checkJSON(type, bytes) }
    return 0
}

/// `json(fromBinary:)` against decoding then writing JSON: the same bytes, or both refusing.
private func checkJSON<M: JSONMessage>(_ type: M.Type, _ bytes: UnsafeRawBufferPointer) {
    let expected = try? M(serializedBytes: bytes, maxBytes: WireLimits.defaultMaxMessageBytes).jsonUTF8()
    let written = try? M.json(fromBinary: bytes)
    guard written == expected else {
        fatalError("\(M.protoName): JSON from the wire \(written.map { String(decoding: $0, as: UTF8.self) } ?? "refused") differs from the decoded value's \(expected.map { String(decoding: $0, as: UTF8.self) } ?? "refusal")")
    }
}

/// Decodes `bytes` as `M` and checks what a success or a failure must satisfy.
private func check<M: WireMessage>(_ type: M.Type, _ bytes: UnsafeRawBufferPointer) {
    let value: M
    do {
        value = try M(serializedBytes: bytes, maxBytes: WireLimits.defaultMaxMessageBytes)
    } catch {
        guard error.typeName == M.protoName, error.message.hasPrefix(M.protoName) else {
            fatalError("\(M.protoName): the error does not name the type: \(error)")
        }
        return
    }
    let encoded = value.serializedBytes()
    let again: M
    do {
        again = try M(serializedBytes: encoded)
    } catch {
        fatalError("\(M.protoName): the encoding of a decoded value does not decode: \(error); value \(value)")
    }
    guard again == value else {
        fatalError("\(M.protoName): the round trip changed \(value) into \(again)")
    }
    guard again.serializedBytes() == encoded else {
        fatalError("\(M.protoName): the encoding is not deterministic for \(value)")
    }
    var appended: [UInt8] = [0xA5]
    value.serialize(appendingTo: &appended)
    guard appended.count == encoded.count + 1, appended.dropFirst().elementsEqual(encoded) else {
        fatalError("\(M.protoName): serialize(appendingTo:) differs from serializedBytes() for \(value)")
    }
}
