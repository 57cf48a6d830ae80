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
}

