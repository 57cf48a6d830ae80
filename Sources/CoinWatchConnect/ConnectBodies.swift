public import CoinWatchRPC
import CoinWatchProto

/// The JSON bodies Connect defines for errors.
public enum ConnectBodies {
    /// A unary error body: `{"code":"not_found","message":"…"}` (the message left out when empty).
    public static func errorJSON(_ error: RPCError) -> [UInt8] {
        var writer = JSONWriter()
        writeError(error, to: &writer)
        return writer.bytes
    }

    /// The end-of-stream message: `{}` for success, `{"error":{…}}` otherwise; `metadata` holds trailers, each
    /// key with its list of values.
    public static func endStreamJSON(_ error: RPCError?, metadata: [String: [String]] = [:]) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        if let error, error.code != .ok {
            writer.key("error")
            writeError(error, to: &writer)
        }
        if !metadata.isEmpty {
            writer.key("metadata")
            writer.beginObject()
            for key in metadata.keys.sorted() {
                writer.key(key)
                writer.beginArray()
                for value in metadata[key] ?? [] { writer.string(value) }
                writer.endArray()
            }
            writer.endObject()
        }
        writer.endObject()
        return writer.bytes
    }

    private static func writeError(_ error: RPCError, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("code")
        writer.string(error.code.connectName)
        if !error.message.isEmpty {
            writer.key("message")
            writer.string(error.message)
        }
        writer.endObject()
    }
}
