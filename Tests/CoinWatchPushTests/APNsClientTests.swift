import CoinWatchLogging
import CoinWatchPush
import CoinWatchTestSupport
import Foundation
import Synchronization
import Testing

/// The provider on its own, against the mock APNs: every notification answered once, outcomes as APNs means them,
/// answers off the caller's thread, and a close with notifications in flight.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct APNsClientTests {
    /// Collects what the provider answers.
    final class Answers: Sendable {
        let responses = Mutex<[APNsResponse]>([])

        func add(_ batch: [APNsResponse]) { responses.withLock { $0 += batch } }

        var all: [APNsResponse] { responses.withLock { $0 } }

        func wait(for count: Int) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(60)
            while all.count < count && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            return all.count >= count
        }
    }

    func client(_ mock: MockAPNs, streams: Int = 1000) throws -> APNsClient {
        var configuration = APNsConfiguration(
            endpoint: mock.endpoint, environment: .production, defaultTopic: MockAPNs.topic, keyID: MockAPNs.keyID,
            teamID: MockAPNs.teamID)
        configuration.caFile = mock.caFile
        configuration.maxConcurrentStreams = streams
        return try APNsClient(
            configuration: configuration, signer: try ES256ProviderTokenSigner(keyFile: mock.keyFile), logger: .disabled)
    }

    /// A provider against `mock`, started, with the answers it gives collected.
    func startedClient(_ mock: MockAPNs) throws -> (APNsClient, Answers) {
        let client = try client(mock)
        let answers = Answers()
        client.start { answers.add($0) }
        return (client, answers)
    }

    static func request(_ number: Int, prefix: String = "") -> APNsRequest {
        let tail = String(number, radix: 16)
        let token = prefix + String(repeating: "0", count: 64 - prefix.count - tail.count) + tail
        let id = String(format: "00000000-0000-4000-8000-%012x", number)
        return APNsRequest(
            apnsID: id, deviceToken: token, topic: MockAPNs.topic, payload: Array(#"{"aps":{"alert":"test"}}"#.utf8),
            collapseID: "device-\(number):BTC", expiration: Int64(Date().timeIntervalSince1970) + 600,
            tag: Array("key-\(number)".utf8))
    }

    @Test func everyNotificationIsAnsweredOnceWithItsOutcome() async throws {
        let mock = try await MockAPNs.start(maxStreams: 20)
        defer { mock.stopInBackground() }
        let (client, answers) = try startedClient(mock)
        defer { client.close() }
        var requests = (0..<200).map { Self.request($0) }
        requests.append(Self.request(1000, prefix: "410"))
        requests.append(Self.request(1001, prefix: "400"))
        requests.append(Self.request(1002, prefix: "429"))
        requests.append(Self.request(1003, prefix: "500f"))
        for chunk in stride(from: 0, to: requests.count, by: 50) {
            client.send(Array(requests[chunk..<min(chunk + 50, requests.count)]))
        }
        #expect(await answers.wait(for: requests.count))
        let byID = Dictionary(grouping: answers.all, by: \.request.apnsID)
        #expect(byID.count == requests.count)
        #expect(byID.values.allSatisfy { $0.count == 1 })
        for request in requests {
            let response = try #require(byID[request.apnsID]?.first)
            #expect(response.request == request, "the request and its tag come back untouched")
            switch request.deviceToken.prefix(3) {
            case "410": #expect(response.status == 410 && response.reason == "Unregistered" && response.outcome == .tokenRejected)
            case "400": #expect(response.reason == "BadDeviceToken" && response.outcome == .tokenRejected)
            case "429": #expect(response.status == 429 && response.outcome == .retry)
            case "500": #expect(response.status == 500 && response.outcome == .retry)
            default: #expect(response.status == 200 && response.outcome == .delivered)
            }
        }
        let summary = try await mock.summary()
        #expect(summary.maxConcurrentStreams <= 20)
        #expect(summary.connections == 1)
        #expect(summary.tokens.count == 1)
        #expect(summary.protocolErrors == 0)
        #expect(client.status.inFlight == 0)
        #expect(client.status.tokensIssued == 1)
    }

    @Test func anExpiredNotificationIsNotSent() async throws {
        let mock = try await MockAPNs.start()
        defer { mock.stopInBackground() }
        let (client, answers) = try startedClient(mock)
        defer { client.close() }
        var stale = Self.request(1)
        stale.expiration = Int64(Date().timeIntervalSince1970) - 1
        client.send([stale, Self.request(2)])
        #expect(await answers.wait(for: 2))
        #expect(answers.all.first { $0.request.apnsID == stale.apnsID }?.outcome == .expired)
        #expect(try await mock.summary().requests == 1)
    }

    @Test func aPayloadOverAPNsLimitIsRefusedUnsent() async throws {
        let mock = try await MockAPNs.start()
        defer { mock.stopInBackground() }
        let (client, answers) = try startedClient(mock)
        defer { client.close() }
        var large = Self.request(1)
        large.payload = Array(("{\"aps\":{\"alert\":\"" + String(repeating: "x", count: 4096) + "\"}}").utf8)
        var limit = Self.request(2)
        let frame = #"{"aps":{"alert":""}}"#.utf8.count
        limit.payload = Array(("{\"aps\":{\"alert\":\"" + String(repeating: "y", count: 4096 - frame) + "\"}}").utf8)
        #expect(limit.payload.count == APNsRequest.maxPayloadBytes)
        client.send([large, limit])
        #expect(await answers.wait(for: 2))
        let refused = try #require(answers.all.first { $0.request.apnsID == large.apnsID })
        #expect(refused.outcome == .rejected)
        #expect(refused.reason == "PayloadTooLarge")
        #expect(answers.all.first { $0.request.apnsID == limit.apnsID }?.outcome == .delivered)
        #expect(try await mock.summary().requests == 1)
    }

    @Test func aDroppedConnectionFailsWhatWasOnItAndTheNextSendsReconnect() async throws {
        let mock = try await MockAPNs.start()
        defer { mock.stopInBackground() }
        let (client, answers) = try startedClient(mock)
        defer { client.close() }
        try await mock.command("drop-after 30")
        let first = (0..<100).map { Self.request($0) }
        client.send(first)
        #expect(await answers.wait(for: first.count))
        let failed = answers.all.filter { $0.outcome == .retry }
        #expect(!failed.isEmpty)
        #expect(failed.allSatisfy { $0.status == 0 && !$0.failure.isEmpty })
        // The caller sends them again: a new connection takes them.
        client.send(failed.map(\.request))
        #expect(await answers.wait(for: first.count + failed.count))
        let summary = try await mock.summary()
        #expect(summary.deliveredIDs == first.count)
        // Every 200 the mock wrote before the drop reached the provider, and counted, even where libcurl then failed
        // the transfer: none is sent twice.
        #expect(summary.duplicateDeliveries == 0)
        #expect(summary.connections == 2)
    }

    @Test func aTwoHundredFollowedByADeadConnectionIsDelivered() async throws {
        let mock = try await MockAPNs.start()
        defer { mock.stopInBackground() }
        let (client, answers) = try startedClient(mock)
        defer { client.close() }
        // The 200 arrives, its stream never ends, the connection closes: libcurl fails the transfer.
        try await mock.command("cut-after 1")
        client.send([Self.request(1)])
        #expect(await answers.wait(for: 1))
        #expect(answers.all.map(\.outcome) == [.delivered])
        #expect(answers.all.first?.status == 200)
        // Still usable: the next notification goes out on a new connection.
        client.send([Self.request(2)])
        #expect(await answers.wait(for: 2))
        #expect(answers.all.last?.outcome == .delivered)
        let summary = try await mock.summary()
        #expect(summary.deliveredIDs == 2)
        #expect(summary.duplicateDeliveries == 0)
    }

    @Test func aFreshConnectionCarriesOneNotificationUntilItAnswers() async throws {
        let mock = try await MockAPNs.start()
        defer { mock.stopInBackground() }
        let (client, answers) = try startedClient(mock)
        defer { client.close() }
        try await mock.command("hold")
        client.send((0..<10).map { Self.request($0) })
        _ = try await waitForRequests(mock, 1)
        // Held, the first one keeps the rest back: they wait for the server's SETTINGS to be known.
        #expect(client.status.inFlight == 1)
        #expect(client.status.queued == 9)
        #expect(try await mock.summary().requests == 1)
        try await mock.command("release")
        #expect(await answers.wait(for: 10))
        #expect(answers.all.allSatisfy { $0.outcome == .delivered })
    }

    @Test func closingWithNotificationsInFlightAnswersNothingMore() async throws {
        let mock = try await MockAPNs.start()
        defer { mock.stopInBackground() }
        let (client, answers) = try startedClient(mock)
        // A first answer opens the connection to all the streams it allows.
        client.send([Self.request(100)])
        #expect(await answers.wait(for: 1))
        try await mock.command("hold")
        client.send((0..<20).map { Self.request($0) })
        _ = try await waitForRequests(mock, 21)
        client.close()
        client.close()
        client.send([Self.request(99)])
        // The provider let go of its connection: the held answers have nowhere to go, and none came.
        let deadline = ContinuousClock.now + .seconds(60)
        while try await mock.summary().openConnections > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await mock.summary().openConnections == 0)
        try await mock.command("release")
        #expect(answers.all.count == 1)
        #expect(try await mock.summary().requests == 21)
    }

    func waitForRequests(_ mock: MockAPNs, _ count: Int) async throws -> MockAPNs.Summary {
        let deadline = ContinuousClock.now + .seconds(60)
        var summary = try await mock.summary()
        while summary.requests < count && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            summary = try await mock.summary()
        }
        return summary
    }
}
