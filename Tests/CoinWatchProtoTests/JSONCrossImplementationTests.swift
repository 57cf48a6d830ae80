import CoinWatchProto
import Foundation
import Testing

/// Checks the generated JSON mapping against Python's official `json_format`, on every message type, both ways.
@Suite("JSON mapping against Python's json_format")
struct JSONCrossImplementationTests {
    /// Random values of every type: filled ones (every oneof case) and sparse ones.
    private static func samples<M: RandomMessage>(_ type: M.Type, seed: UInt64, count: Int) -> [M] {
        var g = RandomValues(seed: seed ^ 0x150_4A50)
        var values = M.filledSamples(using: &g) + [M()]
        for _ in 0..<count {
            values.append(M.random(using: &g, filled: Bool.random(using: &g.rng), depth: 0))
        }
        return values
    }

    @Test("Swift's JSON parses in Python to the same message, and is Python's canonical form")
    func swiftToPython() throws {
        var requests: [[String: Any]] = []
        var labels: [String] = []
        for messageType in MessageType.all {
            collect(messageType.type, seed: messageType.seed, into: &requests, labels: &labels)
        }
        let answers = try JSONFormatPeer.run(requests)
        for (answer, (request, label)) in zip(answers, zip(requests, labels)) {
            #expect(answer["error"] == nil, "\(label): Python refused \(request["json"] ?? ""): \(answer["error"] ?? "")")
            #expect(answer["equal"] as? Bool == true, "\(label): \(request["json"] ?? "") parsed to another value")
            #expect(
                answer["canonical"] as? Bool == true,
                "\(label): Swift wrote \(request["json"] ?? ""), Python writes \(answer["python"] ?? "")"
            )
        }
    }

    private func collect<M: RandomMessage>(
        _ type: M.Type, seed: UInt64, into requests: inout [[String: Any]], labels: inout [String]
    ) {
        for value in Self.samples(type, seed: seed, count: 24) {
            requests.append([
                "op": "parse", "type": M.protoName, "json": value.jsonString(),
                "binary": Data(value.serializedBytes()).base64EncodedString(),
            ])
            labels.append("\(M.protoName) \(value)")
        }
    }

    @Test("Python's JSON, with each of its options, decodes in Swift to the same message")
    func pythonToSwift() throws {
        var requests: [[String: Any]] = []
        var checks: [(String) throws -> Void] = []
        for messageType in MessageType.all {
            prepare(messageType.type, seed: messageType.seed, into: &requests, checks: &checks)
        }
        let answers = try JSONFormatPeer.run(requests)
        for (answer, (request, check)) in zip(answers, zip(requests, checks)) {
            guard let json = answer["json"] as? String else {
                Issue.record("Python could not print \(request): \(answer["error"] ?? "")")
                continue
            }
            try check(json)
        }
    }

    private func prepare<M: RandomMessage>(
        _ type: M.Type, seed: UInt64, into requests: inout [[String: Any]], checks: inout [(String) throws -> Void]
    ) {
        for (index, value) in Self.samples(type, seed: seed ^ 0x77, count: 24).enumerated() {
            // Every combination of Python's options over the samples: names, defaults written, enum numbers.
            let names = index & 1 != 0
            let defaults = index & 2 != 0
            let enumNumbers = index & 4 != 0
            requests.append([
                "op": "print", "type": M.protoName, "binary": Data(value.serializedBytes()).base64EncodedString(),
                "names": names, "defaults": defaults, "enumNumbers": enumNumbers,
            ])
            checks.append { json in
                let decoded = try M(jsonString: json)
                #expect(decoded == value, "\(M.protoName): Python wrote \(json)")
            }
        }
    }

    @Test("Python refuses what Swift refuses: unknown fields, a duplicate field, two oneof members")
    func sameRefusals() throws {
        let documents = [
            (V1.GetSettingsRequest.protoName, #"{"deviceId":"a","color":1}"#),
            (V1.GetSettingsRequest.protoName, #"{"deviceId":"a","deviceId":"b"}"#),
            (V1.Frame.protoName, #"{"hello":{},"ping":{}}"#),
            (V1.Decimal.protoName, #"{"scale":-1}"#),
            (V1.Decimal.protoName, #"{"mantissa":"1.5"}"#),
            (V1.Alert.protoName, #"{"direction":"SIDEWAYS"}"#),
        ]
        let requests: [[String: Any]] = documents.map {
            ["op": "parse", "type": $0.0, "json": $0.1, "binary": ""]
        }
        let answers = try JSONFormatPeer.run(requests)
        for (answer, document) in zip(answers, documents) {
            #expect(answer["error"] != nil, "Python accepted \(document.1)")
            let type = V1.messageTypes.first { $0.protoName == document.0 } as? any JSONMessage.Type
            #expect(throws: JSONDecodingError.self, "Swift accepted \(document.1)") {
                _ = try type.map { try $0.init(jsonString: document.1, options: .init()) }
            }
        }
    }
}
