import CoinWatchProto
@testable import CoinWatchRPC

/// What the server may send back for any input, as `docs/PROTOCOL.md` promises.
enum OutputChecks {
    /// - `output` is whole, valid frames (each a `Frame` with a kind), or exactly the plain-text HTTP reply when
    ///   the input started like an HTTP request;
    /// - the first frame answers the handshake: `Welcome` when the input's first frame is a valid `Hello`,
    ///   otherwise nothing or a `ConnectionError`;
    /// - a `ConnectionError` is the last frame, and `Welcome` comes at most once.
    ///
    /// A client that sends a `ConnectionError` itself makes the server close at once, dropping queued output: after
    /// one, the output may stop anywhere (even inside a frame), but what arrived must still be valid.
    static func check(output: [UInt8], input: UnsafeRawBufferPointer, inputFrames: [[UInt8]], httpRejected: Bool) {
        if httpRejected {
            guard output == Array(ServerConnection.httpReply.utf8) else {
                fatalError("an HTTP request got \(output.count) bytes other than the documented reply")
            }
            return
        }
        let clientAborts = inputFrames.contains(where: isConnectionError)
        let frames = split(output, mayBeCut: clientAborts)
        let expectsWelcome = inputFrames.first.map(isValidHello) ?? false
        if let first = frames.first {
            switch first.kind {
            case .welcome?:
                guard expectsWelcome else { fatalError("Welcome sent without a valid Hello first") }
            case .error?:
                guard !expectsWelcome else { fatalError("a valid Hello was answered with \(first)") }
            default:
                fatalError("the first frame the server sent is \(first)")
            }
        } else if expectsWelcome && !clientAborts {
            fatalError("a valid Hello got no Welcome")
        }
        for (index, frame) in frames.enumerated() {
            switch frame.kind {
            case .error?:
                guard index == frames.count - 1 else { fatalError("frames follow a ConnectionError: \(frames)") }
            case .welcome?:
                guard index == 0 else { fatalError("a second Welcome: \(frames)") }
            case .hello?, .call?, .cancel?, nil:
                fatalError("the server sent a client frame: \(frame)")
            default:
                break
            }
        }
    }

    private static func isValidHello(_ body: [UInt8]) -> Bool {
        guard let frame = try? V1.Frame(serializedBytes: body), case .hello(let hello)? = frame.kind else {
            return false
        }
        return hello.protocolVersion == RPCProtocol.version
    }

    private static func isConnectionError(_ body: [UInt8]) -> Bool {
        guard let frame = try? V1.Frame(serializedBytes: body), case .error? = frame.kind else { return false }
        return true
    }

    /// The server's output as frames; any framing error or undecodable frame is a finding, and so is a cut frame
    /// at the end unless `mayBeCut`.
    private static func split(_ output: [UInt8], mayBeCut: Bool) -> [V1.Frame] {
        var frames: [V1.Frame] = []
        var offset = 0
        while offset < output.count {
            guard output.count - offset >= 4 else {
                if mayBeCut { break }
                fatalError("the server's output ends in a partial length prefix")
            }
            let length = output[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard length > 0 else { fatalError("the server sent a frame of length 0") }
            guard output.count - offset >= length else {
                if mayBeCut { break }
                fatalError("the server sent a frame of length \(length) with \(output.count - offset) bytes left")
            }
            do {
                frames.append(try V1.Frame(serializedBytes: output[offset..<(offset + length)]))
            } catch {
                fatalError("the server sent a frame that does not decode: \(error)")
            }
            offset += length
        }
        return frames
    }
}
