public import CoinWatchModel
import CoinWatchProto
public import CoinWatchRPC

/// The device a request is about, read from its bytes without decoding the message.
///
/// The authoriser runs before the handler decodes the request, on every call of a device method: this walks the
/// top-level fields once and keeps the last occurrence of the device field (protobuf's rule for a repeated
/// scalar), so it names the same device the handler's decoder will.
public enum RequestDevice {
    /// What a request holds in its device field.
    enum Field {
        /// The field's bytes; empty when the field is absent (proto3's empty string).
        case present(UnsafeRawBufferPointer)
        /// The payload is not a well-formed message.
        case malformed
    }

    static func field(_ number: Int, of payload: UnsafeRawBufferPointer) -> Field {
        var cursor = ProtobufCursor(payload)
        var found = UnsafeRawBufferPointer(start: nil, count: 0)
        while !cursor.isAtEnd {
            guard let tag = cursor.tag() else { return .malformed }
            switch tag.wireType {
            case 0:
                guard cursor.varint() != nil else { return .malformed }
            case 1:
                guard cursor.bytes(8) != nil else { return .malformed }
            case 2:
                guard let bytes = cursor.delimited() else { return .malformed }
                if tag.field == number { found = bytes }
            case 5:
                guard cursor.bytes(4) != nil else { return .malformed }
            default:
                return .malformed
            }
        }
        return .present(found)
    }

    /// Whether the request's device is `device`, comparing bytes when the request spells it canonically.
    ///
    /// - Throws: INVALID_ARGUMENT when the payload is not a message or the id is not a valid device id, with the
    ///   message the handler would give.
    public static func matches(_ payload: UnsafeRawBufferPointer, field: Int, device: DeviceID) throws(RPCError) -> Bool {
        guard case .present(let bytes) = self.field(field, of: payload) else { throw malformed }
        if DeviceID.isCanonical(utf8: bytes) {
            return device.rawValue.utf8.elementsEqual(bytes)
        }
        return try self.device(bytes) == device
    }

    /// The request's device.
    public static func device(_ payload: UnsafeRawBufferPointer, field: Int) throws(RPCError) -> DeviceID {
        guard case .present(let bytes) = self.field(field, of: payload) else { throw malformed }
        return try device(bytes)
    }

    static let malformed = RPCError(code: .invalidArgument, message: "payload is not a valid request message")

    private static func device(_ bytes: UnsafeRawBufferPointer) throws(RPCError) -> DeviceID {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            return try DeviceID(validating: text, field: "device_id")
        } catch {
            throw RPCError(code: .invalidArgument, message: error.description)
        }
    }
}
