import Testing
@testable import CoinWatchFeeds

/// The client state machine: open, answer pings, echo and initiate closes, and fail with the right close code.
struct WebSocketClientTests {
    typealias S = ServerFrames

    enum Seen: Equatable {
        case opened
        case text(String)
        case binary([UInt8])
        case ping
        case pong
        case closed(UInt16?, String)
    }

    static func client(max: Int = 1 << 20) throws -> WebSocketClient {
        var client = WebSocketClient(
            url: try WebSocketURL(parsing: "ws://127.0.0.1:1/"), configuration: .init(maxMessageBytes: max),
            keyBytes: S.keyBytes, sha1: S.fakeDigest, maskKeys: { 0xA1B2_C3D4 })
        client.start()
        _ = client.takeOutput()
        return client
    }

    @discardableResult
    static func feed(_ client: inout WebSocketClient, _ bytes: [UInt8]) -> (seen: [Seen], error: WebSocketError?) {
        var seen: [Seen] = []
        do {
            try S.withBytes(bytes) { (raw) throws(WebSocketError) in
                try client.receive(raw) { event in
                    switch event {
                    case .opened: seen.append(.opened)
                    case .text(let bytes): seen.append(.text(String(decoding: bytes, as: UTF8.self)))
                    case .binary(let payload): seen.append(.binary(Array(payload)))
                    case .ping: seen.append(.ping)
                    case .pong: seen.append(.pong)
                    case .closed(let code, let reason): seen.append(.closed(code, reason))
                    }
                }
            }
        } catch {
            return (seen, error)
        }
        return (seen, nil)
    }

    @Test func opensThenDeliversTextAndAnswersPings() throws {
        var client = try Self.client()
        let result = Self.feed(&client, S.upgradeResponse() + S.text("{\"type\":\"ping\"}") + S.frame(0x9, [1, 2, 3]))
        #expect(result.error == nil)
        #expect(result.seen == [.opened, .text("{\"type\":\"ping\"}"), .ping])
        #expect(client.state == .open)
        #expect(S.clientFrames(client.takeOutput()) == [.init(opcode: 0xA, payload: [1, 2, 3])])
        client.send(text: "{\"type\":\"subscribe\",\"symbol\":\"BINANCE:BTCUSDT\"}")
        client.sendPing([7])
        #expect(S.clientFrames(client.takeOutput()) == [
            .init(opcode: 0x1, payload: Array("{\"type\":\"subscribe\",\"symbol\":\"BINANCE:BTCUSDT\"}".utf8)),
            .init(opcode: 0x9, payload: [7]),
        ])
        #expect(Self.feed(&client, S.frame(0xA, [7])).seen == [.pong])
    }

    @Test func framesSentBeforeTheUpgradeFinishedAreNotSent() throws {
        var client = try Self.client()
        client.send(text: "early")
        client.sendPing()
        #expect(!client.hasOutput)
    }

    @Test func theServersCloseIsEchoedAndEndsTheConnection() throws {
        var client = try Self.client()
        Self.feed(&client, S.upgradeResponse())
        let result = Self.feed(&client, S.close(4001, "maintenance") + S.text("ignored"))
        #expect(result.seen == [.closed(4001, "maintenance")])
        #expect(client.state == .closed)
        #expect(client.shouldCloseTransport)
        #expect(S.clientFrames(client.takeOutput()) == [.init(opcode: 0x8, payload: [0x0F, 0xA1])])
    }

    @Test func aLocalCloseWaitsForTheServersClose() throws {
        var client = try Self.client()
        Self.feed(&client, S.upgradeResponse())
        client.close(code: 1001, reason: "shutting down")
        #expect(client.state == .closeSent)
        #expect(!client.shouldCloseTransport)
        #expect(S.clientFrames(client.takeOutput()) == [
            .init(opcode: 0x8, payload: [0x03, 0xE9] + Array("shutting down".utf8)),
        ])
        // Messages still in flight are delivered; the server's close ends it without a second close frame.
        #expect(Self.feed(&client, S.text("late") + S.close(1001)).seen == [.text("late"), .closed(1001, "")])
        #expect(client.shouldCloseTransport)
        #expect(!client.hasOutput)
    }

    @Test func failuresSendTheirCloseCode() throws {
        let cases: [([UInt8], UInt16, WebSocketError.Code)] = [
            (S.frame(0x1, [0xC3, 0x28]), 1007, .invalidText),
            (S.frame(0x1, Array(repeating: 0x61, count: 2000)), 1009, .messageTooBig),
            (S.frame(0x1, [0x61], mask: 7), 1002, .protocolError),
            (S.close(1005), 1002, .protocolError),
        ]
        for (bytes, code, kind) in cases {
            var client = try Self.client(max: 1000)
            Self.feed(&client, S.upgradeResponse())
            let result = Self.feed(&client, bytes + S.text("never delivered"))
            #expect(result.error?.code == kind)
            #expect(result.seen.isEmpty)
            #expect(client.shouldCloseTransport)
            #expect(client.state == .closed)
            let frames = S.clientFrames(client.takeOutput())
            #expect(frames?.count == 1)
            #expect(frames?.first?.opcode == 0x8)
            #expect(frames?.first?.payload.prefix(2) == [UInt8(code >> 8), UInt8(code & 0xFF)][...])
        }
    }

    @Test func theFirstViolationWinsWhateverFollowsInTheSameRead() throws {
        // Found by FuzzWebSocket: text that is not UTF-8, then a stray continuation frame in the same read.
        let bytes: [UInt8] = S.frame(0x1, [0x31, 0xBE]) + [0x00, 0x81, 0x02, 0x31]
        var whole = try Self.client()
        Self.feed(&whole, S.upgradeResponse())
        #expect(Self.feed(&whole, bytes).error?.code == .invalidText)
        var split = try Self.client()
        Self.feed(&split, S.upgradeResponse())
        var errors: [WebSocketError.Code] = []
        for byte in bytes {
            if let error = Self.feed(&split, [byte]).error { errors.append(error.code) }
        }
        #expect(errors == [.invalidText])
    }

    @Test func aBadHandshakeClosesWithoutAFrame() throws {
        var client = try Self.client()
        let result = Self.feed(&client, Array("HTTP/1.1 404 Not Found\r\n\r\n".utf8))
        #expect(result.error?.code == .handshakeFailed)
        #expect(client.shouldCloseTransport)
        #expect(!client.hasOutput)
    }

    @Test func anUnwantedBinaryMessageIsRefusedWith1003() throws {
        var client = try Self.client()
        #expect(Self.feed(&client, S.upgradeResponse() + S.frame(0x2, [1])).seen == [.opened, .binary([1])])
        client.fail(code: 1003, reason: "binary frames are not expected")
        #expect(client.shouldCloseTransport)
        #expect(S.clientFrames(client.takeOutput())?.first?.payload.prefix(2) == [0x03, 0xEB][...])
    }
}
