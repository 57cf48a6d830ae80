import CoinWatchProto

/// libFuzzer target: the JSON decoder of every message of the schema.
///
/// The first input byte picks the message type (its low 7 bits, modulo the number of types) and whether unknown
/// fields are ignored (its top bit); the rest is handed to that type's JSON decoder as untrusted bytes. A decoder
/// must either throw a `JSONDecodingError` that names its type, or return a value that the binary encoding
/// carries unchanged and whose canonical JSON decodes back to it and re-encodes to the same bytes; the encoding
/// written as the document is read (`binary(fromJSON:)`) must be that value's, or the same refusal. Anything else
/// (a crash, a sanitizer report, a broken round trip, an encoding that differs) is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let types = V1.messageTypes
    guard let type = types[Int(data[0] & 0x7F) % types.count] as? any JSONMessage.Type else {
        fatalError("\(types[Int(data[0] & 0x7F) % types.count].protoName) has no JSON mapping")
    }
    let options = JSONDecodingOptions(ignoreUnknownFields: data[0] & 0x80 != 0)
    check(type, UnsafeRawBufferPointer(start: data + 1, count: size - 1), options: options)
    return 0
}

/// Decodes `bytes` as `M` and checks what a success or a failure must satisfy.
private func check<M: JSONMessage>(_ type: M.Type, _ bytes: UnsafeRawBufferPointer, options: JSONDecodingOptions) {
    let value: M
    do {
        value = try M(jsonUTF8: bytes, options: options)
    } catch {
        guard error.typeName == M.protoName, error.message.hasPrefix(M.protoName) else {
            fatalError("\(M.protoName): the error does not name the type: \(error)")
        }
        if let binary = try? M.binary(fromJSON: bytes, options: options) {
            fatalError("\(M.protoName): a document the decoder refuses (\(error)) was encoded as read: \(binary)")
        }
        return
    }
    guard let binary = try? M.binary(fromJSON: bytes, options: options), binary == value.serializedBytes() else {
        fatalError("\(M.protoName): the encoding written as the document is read differs from \(value)'s")
    }
    let json = value.jsonUTF8()
    let again: M
    do {
        again = try M(jsonUTF8: json)
    } catch {
        fatalError("\(M.protoName): the JSON of a decoded value does not decode: \(error); value \(value)")
    }
    guard again == value else {
        fatalError("\(M.protoName): the JSON round trip changed \(value) into \(again)")
    }
    guard again.jsonUTF8() == json else {
        fatalError("\(M.protoName): the JSON encoding is not deterministic for \(value)")
    }
    do {
        guard try M(serializedBytes: value.serializedBytes()) == value else {
            fatalError("\(M.protoName): the binary encoding changed \(value)")
        }
    } catch {
        fatalError("\(M.protoName): a value decoded from JSON has no valid binary encoding: \(error); value \(value)")
    }
}
