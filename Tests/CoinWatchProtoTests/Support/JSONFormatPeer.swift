import CoinWatchTestSupport
import Foundation

/// Runs Python's official protobuf JSON mapping (`Python/json_format_peer.py`, Debian's python3-protobuf) over a
/// batch of requests, one JSON line each, and returns its answers in order.
enum JSONFormatPeer {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let python = "/usr/bin/python3"

    static func run(_ requests: [[String: Any]]) throws -> [[String: Any]] {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "\(python) not found; the JSON cross-checks need it (Debian: python3-protobuf)")
        }
        let work = try TemporaryDirectory()
        let script = Protoc.repositoryRoot.appendingPathComponent("Tests/CoinWatchProtoTests/Python/json_format_peer.py")
        let child = try ChildProcess(
            python, [script.path, Protoc.repositoryRoot.appendingPathComponent("proto").path, work.path])
        var input: [UInt8] = []
        for request in requests {
            input += try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys])
            input.append(0x0A)
        }
        child.write(input)
        child.closeInput()
        guard let status = child.wait(timeout: .seconds(120)) else {
            throw Failure(description: "json_format_peer.py did not finish within 120 s")
        }
        guard status == 0 else {
            throw Failure(description: "json_format_peer.py failed with status \(status): \(child.stderr)")
        }
        let lines = child.stdout.split(separator: "\n")
        guard lines.count == requests.count else {
            throw Failure(description: "\(requests.count) requests but \(lines.count) answers; stderr: \(child.stderr)")
        }
        return try lines.map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw Failure(description: "not a JSON object: \(line)")
            }
            return object
        }
    }
}
