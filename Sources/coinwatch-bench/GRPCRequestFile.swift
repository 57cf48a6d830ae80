import CoinWatchCommandLine
import CoinWatchProto
import Foundation

/// The body `h2load` posts to measure gRPC unary calls: one GetSettings request for device bench-0, framed
/// as gRPC frames a message (a 0 flag byte, the 4-byte big-endian length, the message), so a load generator
/// that knows nothing of gRPC can replay it. The devices are created first, over the native protocol, so the
/// calls find settings as the native benchmark's do.
struct GRPCRequestFile {
    let options: BenchOptions

    func run() throws -> Int32 {
        guard let path = options.out else { throw UsageError("grpc-request needs --out FILE") }
        try UnaryBenchmark(options: options).prepareDevices()
        let message = V1.GetSettingsRequest(deviceID: "bench-0").serializedBytes()
        let length = UInt32(message.count)
        let body = [0, UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
                    UInt8(truncatingIfNeeded: length)] + message
        guard FileManager.default.createFile(atPath: path, contents: Data(body)) else {
            throw UsageError("cannot write \(path)")
        }
        print("wrote \(body.count) bytes to \(path)")
        return 0
    }
}
