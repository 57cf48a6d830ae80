import CoinWatchRPC
import Testing
@testable import CoinWatchHTTP

/// A kept head decision is reused only for a head that would decide the same: the same method, target, version
/// and fields in the same order, `Content-Length` alone allowed to differ.
@Suite(.timeLimit(.minutes(1)))
struct HTTP1HeadDecisionTests {
    typealias Running = HTTPServerTests.Running

    static func request(
        _ method: String = "POST", _ target: String = "/coinwatch.v1.Health/Check", version: String = "HTTP/1.1",
        fields: [String] = ["Host: t", "Content-Type: application/json"], body: String = "{}"
    ) throws -> HTTP1Request {
        let text = "\(method) \(target) \(version)\r\n" + fields.map { $0 + "\r\n" }.joined()
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        let requests = try HTTP1ParserTests.parse(text)
        return try #require(requests.first)
    }

    @Test("a repeated head is decided by the kept decision, whatever its body's length")
    func repeatedHead() async throws {
        let running = try Running()
        let decision = HTTP1HeadDecision(try Self.request(), server: running.http)
        #expect(decision.route == .connect)
        #expect(decision.keepAlive)
        #expect(decision.decides(try Self.request()))
        #expect(decision.decides(try Self.request(body: #"{"service":"coinwatch.v1.CoinWatch"}"#)))
        await running.server.shutdownNow()
    }

    @Test("any other difference in the head is decided anew")
    func otherHeads() async throws {
        let running = try Running()
        let decision = HTTP1HeadDecision(try Self.request(), server: running.http)
        let others = [
            try Self.request("PUT"),
            try Self.request(target: "/coinwatch.v1.Health/Check?x"),
            try Self.request(version: "HTTP/1.0"),
            try Self.request(fields: ["Host: t", "Content-Type: application/proto"]),
            try Self.request(fields: ["Content-Type: application/json", "Host: t"]),
            try Self.request(fields: ["Host: t", "Content-Type: application/json", "Connection: close"]),
            try Self.request(fields: ["Host: t", "Content-Type: application/json", "Origin: https://a.example"]),
            try Self.request(fields: ["Host: t", "Content-Type: application/json", "Connect-Timeout-Ms: 5"]),
        ]
        for other in others {
            #expect(!decision.decides(other), "\(other.method) \(other.target.text) \(other.headers)")
        }
        await running.server.shutdownNow()
    }

    static func request(target: String) throws -> HTTP1Request { try request("POST", target) }
}
