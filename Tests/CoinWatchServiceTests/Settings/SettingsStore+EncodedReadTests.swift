import CoinWatchProto
import CoinWatchRPC
import Testing
@testable import CoinWatchService

@Suite("SettingsStore encoded reads")
struct SettingsStoreEncodedReadTests {
    @Test("the pre-encoded GetSettings response always decodes to the committed settings, across saves and reopen")
    func encodedMatchesSettings() async throws {
        try await withStore { store, _, path in
            for step in 0..<5 {
                var request = V1.SaveSettingsRequest(deviceID: "3F2504E0_4F89_11D3_9A0C_0305E82C3301")
                request.setRules[step % 2 == 0 ? "btc" : "ETH"] = rule(below: "\(100 + step).5", above: "\(900 + step)")
                _ = try await store.saveResult(request).get()
                let query = V1.GetSettingsRequest(deviceID: "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
                let bytes = try store.getSettingsEncoded(query).get()
                let decoded = try V1.GetSettingsResponse(serializedBytes: bytes)
                #expect(decoded.settings == (try store.getSettings(query).get()))
                #expect(decoded.settings?.version == UInt64(step + 1))
            }
            #expect(store.getSettingsEncoded(V1.GetSettingsRequest(deviceID: "nobody")).failure?.code == .notFound)
            #expect(store.getSettingsEncoded(V1.GetSettingsRequest(deviceID: "bad id")).failure?.code == .invalidArgument)
            _ = path
        }
    }

    /// The answer of `getSettingsEncoded(serializedRequest:respond:)`, as a value.
    static func answer(_ store: SettingsStore, _ payload: [UInt8]) -> Result<[UInt8], RPCError> {
        var response: [UInt8]?
        var calls = 0
        let outcome: Result<Void, RPCError> = payload.withUnsafeBytes { bytes in
            do throws(RPCError) {
                try store.getSettingsEncoded(serializedRequest: bytes) { response = Array($0); calls += 1 }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        #expect(calls == (outcome.failure == nil ? 1 : 0))
        return outcome.map { response ?? [] }
    }

    @Test("reads from the request's bytes answer exactly as reads of the decoded request, for every request shape")
    func serializedRequestAgrees() async throws {
        try await withStore { store, _, _ in
            for device in ["phone-1", "3f2504e0-4f89-11d3-9a0c-0305e82c3301", String(repeating: "d", count: 128)] {
                var request = V1.SaveSettingsRequest(deviceID: device)
                request.setRules["BTC"] = rule(below: "100", above: "200")
                _ = try await store.saveResult(request).get()
            }
            let ids = ["phone-1", "phone-2", "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "3F2504E0_4F89_11D3_9A0C_0305E82C3301",
                       String(repeating: "d", count: 128), String(repeating: "d", count: 129), "", "bad id", "é"]
            var payloads = ids.map { V1.GetSettingsRequest(deviceID: $0).serializedBytes() }
            let phone = V1.GetSettingsRequest(deviceID: "phone-1").serializedBytes()
            payloads += [
                phone + [0x10, 0x01],  // an unknown field after the id
                V1.GetSettingsRequest(deviceID: "nobody").serializedBytes() + phone,  // repeated: the last one wins
                [0x0A, 0x05, 0x61],  // truncated
                [0x0A, 0x02, 0xC3, 0x28],  // not UTF-8
                [0xFF, 0xFF, 0xFF],  // not protobuf
            ]
            for payload in payloads {
                let fromBytes = Self.answer(store, payload)
                let decoded: Result<[UInt8], RPCError> = payload.withUnsafeBytes { bytes in
                    do throws(RPCError) {
                        return store.getSettingsEncoded(try RPCMethod.decode(V1.GetSettingsRequest.self, bytes))
                    } catch {
                        return .failure(error)
                    }
                }
                #expect(fromBytes == decoded, "payload \(payload)")
            }
            #expect(Self.answer(store, phone).failure == nil)
            #expect(Self.answer(store, V1.GetSettingsRequest(deviceID: "nobody").serializedBytes()).failure
                == RPCError(code: .notFound, message: "no settings for device 'nobody'"))
        }
    }
}
