@testable import CoinWatchFeeds

/// Frames as a server writes them (unmasked), and the reading of a client's masked frames, for the tests.
enum ServerFrames {
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, mask: UInt32? = nil,
                      forceLength64: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if payload.count < 126 && !forceLength64 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF && !forceLength64 {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
        }
        if let mask {
            let key: [UInt8] = [UInt8(mask >> 24), UInt8(mask >> 16 & 0xFF), UInt8(mask >> 8 & 0xFF), UInt8(mask & 0xFF)]
            bytes += key
            bytes += payload.enumerated().map { $0.element ^ key[$0.offset & 3] }
        } else {
            bytes += payload
        }
        return bytes
    }

    /// Runs a typed-throwing body over `bytes` (`withUnsafeBytes` itself only rethrows untyped errors).
    static func withBytes(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(WebSocketError) -> Void)
        throws(WebSocketError)
    {
        var failure: WebSocketError?
        bytes.withUnsafeBytes { raw in
            do throws(WebSocketError) {
                try body(raw)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    static func text(_ text: String, fin: Bool = true) -> [UInt8] { frame(0x1, Array(text.utf8), fin: fin) }

    static func close(_ code: UInt16, _ reason: String = "") -> [UInt8] {
        frame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    /// A frame the client sent: checks it is masked and final, and unmasks it.
    struct ClientFrame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]
    }

    static func clientFrames(_ bytes: [UInt8]) -> [ClientFrame]? {
        var frames: [ClientFrame] = []
        var index = 0
        while index < bytes.count {
            guard bytes.count - index >= 2, bytes[index] & 0x80 != 0, bytes[index + 1] & 0x80 != 0 else { return nil }
            let opcode = bytes[index] & 0x0F
            var length = Int(bytes[index + 1] & 0x7F)
            index += 2
            if length == 126 {
                length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                index += 2
            } else if length == 127 {
                length = 0
                for offset in 0..<8 { length = length << 8 | Int(bytes[index + offset]) }
                index += 8
            }
            let key = Array(bytes[index..<(index + 4)])
            index += 4
            guard bytes.count - index >= length else { return nil }
            let payload = bytes[index..<(index + length)].enumerated().map { $0.element ^ key[$0.offset & 3] }
            index += length
            frames.append(ClientFrame(opcode: opcode, payload: payload))
        }
        return frames
    }

    /// A stand-in for SHA-1 in tests of the state machines: any fixed function works, since the server's answer is
    /// computed with the same one. (The real digest is tested with RFC 6455's example where SHA-1 is available.)
    static func fakeDigest(_ bytes: [UInt8]) -> [UInt8] {
        var state: [UInt8] = Array(repeating: 0x5A, count: 20)
        for (index, byte) in bytes.enumerated() { state[index % 20] = state[index % 20] &* 31 &+ byte }
        return state
    }

    static let keyBytes: [UInt8] = Array(1...16)

    /// The `101` answer to a client built with `keyBytes` and `fakeDigest`.
    static func upgradeResponse(extraHeaders: String = "") -> [UInt8] {
        let key = [UInt8](keyBytes)
        let handshake = WebSocketHandshake(
            url: WebSocketURL(isSecure: false, host: "h", port: 80), keyBytes: key, sha1: fakeDigest)
        return Array(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(handshake.expectedAccept)\r\n\(extraHeaders)\r\n").utf8)
    }
}
