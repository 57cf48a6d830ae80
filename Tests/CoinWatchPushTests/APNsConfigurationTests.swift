import Testing
@testable import CoinWatchPush

struct APNsConfigurationTests {
    func valid() -> APNsConfiguration {
        APNsConfiguration(
            endpoint: APNsConfiguration.productionEndpoint, environment: .production, defaultTopic: "com.example.app",
            keyID: "ABC123DEFG", teamID: "TEAM123456")
    }

    @Test func theDefaultsAreValid() throws {
        try valid().validate()
        #expect(valid().connections == 1)
        #expect(valid().capacity == 1000)
        #expect(APNsConfiguration.recommendedTokenRefresh.contains(valid().tokenRefresh))
        #expect(APNsConfiguration.endpoint(for: .sandbox) == "https://api.sandbox.push.apple.com")
    }

    @Test(arguments: [
        ("endpoint", "must start with https://"), ("path", "with no path"), ("topic", "must be a bundle id"),
        ("key", "key id"), ("team", "team id"), ("connections", "connections must be 1–64"),
        ("refresh", "at most 50m"),
    ])
    func aBadSettingIsNamed(setting: String, message: String) {
        var configuration = valid()
        switch setting {
        case "endpoint": configuration.endpoint = "api.push.apple.com"
        case "path": configuration.endpoint = "https://host/3/device"
        case "topic": configuration.defaultTopic = "com example"
        case "key": configuration.keyID = ""
        case "team": configuration.teamID = "TEAM-1"
        case "connections": configuration.connections = 0
        default: configuration.tokenRefresh = .seconds(3600)
        }
        let error = #expect(throws: PushError.self) { try configuration.validate() }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test func topicsAreBundleIDsWithTheirSuffixes() {
        #expect(APNsConfiguration.isTopic("com.example.app"))
        #expect(APNsConfiguration.isTopic("com.example.app.voip"))
        #expect(APNsConfiguration.isTopic("com.example-company.app"))
        #expect(!APNsConfiguration.isTopic(""))
        #expect(!APNsConfiguration.isTopic("com.example app"))
        #expect(!APNsConfiguration.isTopic(String(repeating: "a", count: 256)))
    }
}
