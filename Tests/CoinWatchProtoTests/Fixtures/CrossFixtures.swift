import CoinWatchProto

/// A text-format message for `protoc --encode` and the value it must decode to in Swift.
struct CrossFixture: Sendable, CustomStringConvertible {
    let name: String
    let text: String
    let expected: any WireMessage
    /// protoc writes the key and value of every map entry even when empty; protobuf-c omits empty strings,
    /// as for any proto3 field. Both decode the same, but then the bytes differ.
    var hasEmptyMapString = false

    var protoName: String { type(of: expected).protoName }
    var description: String { name }
}

private let btcRule = V1.AlertRule(
    below: V1.Decimal(mantissa: 6_000_000, scale: 2),
    above: V1.Decimal(mantissa: 7_000_050, scale: 2)
)
private let btcRuleText = "below { mantissa: 6000000 scale: 2 } above { mantissa: 7000050 scale: 2 }"

private let settings = V1.Settings(
    deviceID: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    rules: [
        "BTC": btcRule,
        "ÉTH": V1.AlertRule(below: nil, above: V1.Decimal(mantissa: -1, scale: 18)),
        "DOGE": V1.AlertRule(below: V1.Decimal(), above: nil),
    ],
    version: 18_446_744_073_709_551_615,
    updatedAtMs: -1_700_000_000_000
)
private let settingsText = """
    device_id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
    rules { key: "BTC" value { \(btcRuleText) } }
    rules { key: "DOGE" value { below { } } }
    rules { key: "ÉTH" value { above { mantissa: -1 scale: 18 } } }
    version: 18446744073709551615
    updated_at_ms: -1700000000000
    """

private let tick = V1.Tick(symbol: "BTC", price: V1.Decimal(mantissa: -6_425_050, scale: 2), timeMs: -1)
private let tickText = #"symbol: "BTC" price { mantissa: -6425050 scale: 2 } time_ms: -1"#

private let registration = V1.DeviceRegistration(
    deviceID: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
    apnsToken: "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad", environment: .sandbox,
    topic: "com.example.CoinWatch", locale: "zh-Hant-臺灣", registeredAtMs: -1_700_000_000_000, status: .disabled,
    disabledReason: "Unregistered – désinstallé", disabledAtMs: -1, delivered: .max,
    lastDeliveredAlertID: "a-ü-1", lastDeliveredAtMs: -9_223_372_036_854_775_808
)
private let registrationText = """
    device_id: "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
    apns_token: "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad" environment: PUSH_ENVIRONMENT_SANDBOX
    topic: "com.example.CoinWatch" locale: "zh-Hant-臺灣" registered_at_ms: -1700000000000 status: DELIVERY_STATUS_DISABLED
    disabled_reason: "Unregistered – désinstallé" disabled_at_ms: -1 delivered: 18446744073709551615
    last_delivered_alert_id: "a-ü-1" last_delivered_at_ms: -9223372036854775808
    """

private let feedHealth = V1.FeedSourceHealth(
    name: "binance", connected: true, lastMessageAgeMs: -1, reconnects: 3, gaps: .max,
    messagesPerSecond: V1.Decimal(mantissa: -12_345, scale: 1), messages: 1_000_000, rejectedMessages: 2,
    lastError: "TLS: certificat expiré 🔒"
)
private let feedHealthText = """
    name: "binance" connected: true last_message_age_ms: -1 reconnects: 3 gaps: 18446744073709551615
    messages_per_second { mantissa: -12345 scale: 1 } messages: 1000000 rejected_messages: 2
    last_error: "TLS: certificat expiré 🔒"
    """

private let pushState = V1.PushDeliveryState(
    enabled: true, endpoint: "https://api.sandbox.push.apple.com", paused: true,
    pauseReason: "ExpiredProviderToken – jeton expiré", queued: 1, inFlight: 2, delivered: 3, retried: 4, expired: 5,
    rejected: 6, registeredDevices: .max, disabledDevices: 8
)
private let pushStateText = """
    enabled: true endpoint: "https://api.sandbox.push.apple.com" paused: true
    pause_reason: "ExpiredProviderToken – jeton expiré" queued: 1 in_flight: 2 delivered: 3 retried: 4 expired: 5
    rejected: 6 registered_devices: 18446744073709551615 disabled_devices: 8
    """

private let lease = V1.ClusterLease(key: "shard.07", ageMs: 1500, validForMs: .max, token: 42)
private let leaseText = "key: \"shard.07\" age_ms: 1500 valid_for_ms: 18446744073709551615 token: 42"

private let clusterHealth = V1.ClusterHealth(
    nodeID: "nœud-1", natsState: "connected", natsServer: "nats://10.0.0.1:4222", members: ["nœud-1", "node-2"],
    ownedShards: 0x8000_0000_0000_0081, runsFeed: true,
    leases: [lease, V1.ClusterLease(key: "feed.binance", ageMs: 0, validForMs: 3000, token: .max)],
    settingsRevision: .max, settingsLag: 3
)
private let clusterHealthText = """
    node_id: "nœud-1" nats_state: "connected" nats_server: "nats://10.0.0.1:4222"
    members: "nœud-1" members: "node-2" owned_shards: 9223372036854775937 runs_feed: true
    leases { \(leaseText) } leases { key: "feed.binance" valid_for_ms: 3000 token: 18446744073709551615 }
    settings_revision: 18446744073709551615 settings_lag: 3
    """

private let serviceKey = V1.ServiceKey(
    id: "0123456789abcdef", name: "price-feeder – Zürich", scopes: ["prices:publish", "prices:read"],
    createdAtMs: -1_700_000_000_000, revoked: true, revokedAtMs: -1
)
private let serviceKeyText = """
    id: "0123456789abcdef" name: "price-feeder – Zürich" scopes: "prices:publish" scopes: "prices:read"
    created_at_ms: -1700000000000 revoked: true revoked_at_ms: -1
    """

/// SHA-256 of the empty string.
private let secretSha256: [UInt8] = [
    0xE3, 0xB0, 0xC4, 0x42, 0x98, 0xFC, 0x1C, 0x14, 0x9A, 0xFB, 0xF4, 0xC8, 0x99, 0x6F, 0xB9, 0x24,
    0x27, 0xAE, 0x41, 0xE4, 0x64, 0x9B, 0x93, 0x4C, 0xA4, 0x95, 0x99, 0x1B, 0x78, 0x52, 0xB8, 0x55,
]
private let secretSha256Text =
    #""\xe3\xb0\xc4\x42\x98\xfc\x1c\x14\x9a\xfb\xf4\xc8\x99\x6f\xb9\x24\x27\xae\x41\xe4\x64\x9b\x93\x4c\xa4\x95\x99\x1b\x78\x52\xb8\x55""#

/// One fixture per message type at least (Frame: several kinds), every field set, with maps, repeated fields,
/// negative numbers (sint64 mantissas, int64 times, negative and unnamed enum values) and non-ASCII strings.
let crossFixtures: [CrossFixture] = [
    CrossFixture(
        name: "Decimal", text: "mantissa: -642505 scale: 1",
        expected: V1.Decimal(mantissa: -642_505, scale: 1)
    ),
    CrossFixture(
        name: "AlertRule(empty above)", text: "below { mantissa: 9223372036854775807 scale: 18 } above { }",
        expected: V1.AlertRule(below: V1.Decimal(mantissa: .max, scale: 18), above: V1.Decimal())
    ),
    CrossFixture(name: "Settings", text: settingsText, expected: settings),
    CrossFixture(
        name: "GetSettingsRequest", text: #"device_id: "dévice-😀""#,
        expected: V1.GetSettingsRequest(deviceID: "dévice-😀")
    ),
    CrossFixture(
        name: "GetSettingsResponse", text: "settings { \(settingsText) }",
        expected: V1.GetSettingsResponse(settings: settings)
    ),
    CrossFixture(
        name: "SaveSettingsRequest(expected_version 0)",
        text: """
            device_id: "d-1"
            set_rules { key: "BTC" value { \(btcRuleText) } }
            set_rules { key: "中文" value { } }
            remove_symbols: "DOGE"
            remove_symbols: "ŠIB"
            remove_symbols: ""
            expected_version: 0
            """,
        expected: V1.SaveSettingsRequest(
            deviceID: "d-1", setRules: ["BTC": btcRule, "中文": V1.AlertRule()],
            removeSymbols: ["DOGE", "ŠIB", ""], precondition: .expectedVersion(0)
        )
    ),
    CrossFixture(
        name: "SaveSettingsResponse", text: "settings { \(settingsText) }",
        expected: V1.SaveSettingsResponse(settings: settings)
    ),
    CrossFixture(
        name: "DeleteSettingsRequest", text: #"device_id: "x" expected_version: 18446744073709551615"#,
        expected: V1.DeleteSettingsRequest(deviceID: "x", precondition: .expectedVersion(.max))
    ),
    CrossFixture(
        name: "DeleteSettingsResponse", text: "existed: true", expected: V1.DeleteSettingsResponse(existed: true)
    ),
    CrossFixture(name: "Tick", text: tickText, expected: tick),
    CrossFixture(
        name: "StreamPricesRequest",
        text: #"symbols: "BTC" symbols: "ETH" symbols: "中文" min_interval_ms: 4294967295 only_changes: true"#,
        expected: V1.StreamPricesRequest(symbols: ["BTC", "ETH", "中文"], minIntervalMs: .max, onlyChanges: true)
    ),
    CrossFixture(
        name: "PriceUpdate",
        text: """
            symbol: "ETH" price { mantissa: -9223372036854775808 }
            source_time_ms: -9223372036854775808 sequence: 18446744073709551615
            """,
        expected: V1.PriceUpdate(
            symbol: "ETH", price: V1.Decimal(mantissa: .min, scale: 0), sourceTimeMs: .min, sequence: .max
        )
    ),
    CrossFixture(
        name: "GetPricesRequest", text: #"symbols: "BTC" symbols: "" symbols: "𝄞""#,
        expected: V1.GetPricesRequest(symbols: ["BTC", "", "𝄞"])
    ),
    CrossFixture(
        name: "GetPricesResponse", text: "prices { \(tickText) } prices { }",
        expected: V1.GetPricesResponse(prices: [tick, V1.Tick()])
    ),
    CrossFixture(
        name: "PublishPricesRequest",
        text: #"ticks { \#(tickText) } ticks { symbol: "Ж" price { mantissa: 1 scale: 0 } time_ms: 1700000000000 }"#,
        expected: V1.PublishPricesRequest(ticks: [
            tick, V1.Tick(symbol: "Ж", price: V1.Decimal(mantissa: 1), timeMs: 1_700_000_000_000),
        ])
    ),
    CrossFixture(name: "PublishPricesResponse", text: "accepted: 7", expected: V1.PublishPricesResponse(accepted: 7)),
    CrossFixture(
        name: "StreamAlertsRequest", text: #"device_id: "dev-ü""#,
        expected: V1.StreamAlertsRequest(deviceID: "dev-ü")
    ),
    CrossFixture(
        name: "Alert",
        text: #"""
            id: "a-1" device_id: "dev" symbol: "BTC" direction: DIRECTION_BELOW
            threshold { mantissa: 60000 } price { mantissa: -5999950 scale: 2 } time_ms: -2
            idempotency_key: "dev/BTC/below/60000/3"
            apns_payload_json: "{\"aps\":{\"alert\":\"BTC ≤ 60 000\"}}"
            apns_collapse_id: "dev-BTC" push_interest: "dev_btc_changed"
            """#,
        expected: V1.Alert(
            id: "a-1", deviceID: "dev", symbol: "BTC", direction: .below, threshold: V1.Decimal(mantissa: 60_000),
            price: V1.Decimal(mantissa: -5_999_950, scale: 2), timeMs: -2, idempotencyKey: "dev/BTC/below/60000/3",
            apnsPayloadJSON: #"{"aps":{"alert":"BTC ≤ 60 000"}}"#, apnsCollapseID: "dev-BTC",
            pushInterest: "dev_btc_changed"
        )
    ),
    CrossFixture(
        name: "HealthCheckRequest", text: #"service: "coinwatch.v1.CoinWatch""#,
        expected: V1.HealthCheckRequest(service: "coinwatch.v1.CoinWatch")
    ),
    CrossFixture(
        name: "HealthCheckResponse", text: "status: NOT_SERVING",
        expected: V1.HealthCheckResponse(status: .notServing)
    ),
    CrossFixture(
        name: "Frame(call)",
        text: #"""
            call {
              call_id: 1 method: "coinwatch.v1.CoinWatch/GetSettings" timeout_ms: 5000
              metadata { key: "authorization" value: "Bearer t" }
              metadata { key: "request-id" value: "r-ü" }
              payload: "\n\003abc"
            }
            """#,
        expected: V1.Frame(kind: .call(V1.Call(
            callID: 1, method: "coinwatch.v1.CoinWatch/GetSettings", timeoutMs: 5000,
            metadata: ["request-id": "r-ü", "authorization": "Bearer t"], payload: [0x0A, 0x03, 0x61, 0x62, 0x63]
        )))
    ),
    CrossFixture(name: "Frame(hello, empty)", text: "hello { }", expected: V1.Frame(kind: .hello(V1.Hello()))),
    CrossFixture(
        name: "Frame(end)",
        text: #"end { call_id: 2 status { code: ABORTED message: "version is 3" } trailers { key: "k" value: "v" } }"#,
        expected: V1.Frame(kind: .end(V1.End(
            callID: 2, status: V1.Status(code: .aborted, message: "version is 3"), trailers: ["k": "v"]
        )))
    ),
    CrossFixture(
        name: "Frame(go_away)", text: #"go_away { last_call_id: 9 code: UNAVAILABLE reason: "stopping" }"#,
        expected: V1.Frame(kind: .goAway(V1.GoAway(lastCallID: 9, code: .unavailable, reason: "stopping")))
    ),
    CrossFixture(
        name: "Status", text: #"code: UNAUTHENTICATED message: "ünïcödé 😀""#,
        expected: V1.Status(code: .unauthenticated, message: "ünïcödé 😀")
    ),
    CrossFixture(
        name: "Hello", text: #"protocol_version: 1 client_name: "coinwatch-cli/1.0" auth_token: "tøken""#,
        expected: V1.Hello(protocolVersion: 1, clientName: "coinwatch-cli/1.0", authToken: "tøken")
    ),
    CrossFixture(
        name: "Welcome",
        text: #"""
            protocol_version: 1 server_name: "coinwatchd" server_version: "0.1.0" max_frame_bytes: 4194304
            max_concurrent_calls: 100 idle_timeout_ms: 4294967295
            methods: "coinwatch.v1.CoinWatch/GetSettings" methods: "coinwatch.v1.Health/Check"
            """#,
        expected: V1.Welcome(
            protocolVersion: 1, serverName: "coinwatchd", serverVersion: "0.1.0", maxFrameBytes: 4_194_304,
            maxConcurrentCalls: 100, idleTimeoutMs: .max,
            methods: ["coinwatch.v1.CoinWatch/GetSettings", "coinwatch.v1.Health/Check"]
        )
    ),
    CrossFixture(
        name: "Call",
        text: #"""
            call_id: 18446744073709551615 method: "coinwatch.v1.CoinWatch/SaveSettings" timeout_ms: 1
            metadata { key: "a" value: "b" } metadata { key: "ключ" value: "значение" }
            payload: "\000\001\377"
            """#,
        expected: V1.Call(
            callID: .max, method: "coinwatch.v1.CoinWatch/SaveSettings", timeoutMs: 1,
            metadata: ["a": "b", "ключ": "значение"], payload: [0x00, 0x01, 0xFF]
        )
    ),
    CrossFixture(
        name: "Call(empty map key and value)", text: #"metadata { key: "" value: "" } metadata { key: "k" value: "" }"#,
        expected: V1.Call(metadata: ["": "", "k": ""]), hasEmptyMapString: true
    ),
    CrossFixture(
        name: "Message", text: #"call_id: 3 payload: "\377\000""#,
        expected: V1.Message(callID: 3, payload: [0xFF, 0x00])
    ),
    CrossFixture(
        name: "End",
        text: #"""
            call_id: 4 status { code: INVALID_ARGUMENT message: "device_id: empty" }
            trailers { key: "retry-after" value: "5" } trailers { key: "x-ü" value: "ÿ" }
            payload: "\022\000"
            """#,
        expected: V1.End(
            callID: 4, status: V1.Status(code: .invalidArgument, message: "device_id: empty"),
            trailers: ["x-ü": "ÿ", "retry-after": "5"], payload: [0x12, 0x00]
        )
    ),
    CrossFixture(name: "Cancel", text: "call_id: 18446744073709551615", expected: V1.Cancel(callID: .max)),
    CrossFixture(name: "Ping", text: #"payload: "\000\001\002""#, expected: V1.Ping(payload: [0, 1, 2])),
    CrossFixture(name: "Pong", text: #"payload: "pong""#, expected: V1.Pong(payload: Array("pong".utf8))),
    CrossFixture(
        name: "GoAway", text: #"last_call_id: 99 code: RESOURCE_EXHAUSTED reason: "ping flood""#,
        expected: V1.GoAway(lastCallID: 99, code: .resourceExhausted, reason: "ping flood")
    ),
    CrossFixture(
        name: "ConnectionError(unnamed negative code)", text: #"code: -3 message: "frame length 0 is not allowed""#,
        expected: V1.ConnectionError(code: V1.Status.Code(rawValue: -3), message: "frame length 0 is not allowed")
    ),
    CrossFixture(name: "DeviceRegistration", text: registrationText, expected: registration),
    CrossFixture(
        name: "RegisterDeviceRequest",
        text: """
            device_id: "dévice-😀" apns_token: "ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789"
            environment: PUSH_ENVIRONMENT_PRODUCTION topic: "com.example.Münze" locale: "de-CH"
            """,
        expected: V1.RegisterDeviceRequest(
            deviceID: "dévice-😀", apnsToken: "ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789",
            environment: .production, topic: "com.example.Münze", locale: "de-CH"
        )
    ),
    CrossFixture(
        name: "RegisterDeviceRequest(unnamed negative environment)", text: #"device_id: "d" environment: -1"#,
        expected: V1.RegisterDeviceRequest(deviceID: "d", environment: V1.PushEnvironment(rawValue: -1))
    ),
    CrossFixture(
        name: "RegisterDeviceResponse",
        text: #"registration { \#(registrationText) } device_secret: "cwd_sécret_0123""#,
        expected: V1.RegisterDeviceResponse(registration: registration, deviceSecret: "cwd_sécret_0123")
    ),
    CrossFixture(
        name: "UnregisterDeviceRequest", text: #"device_id: "dévice-ü""#,
        expected: V1.UnregisterDeviceRequest(deviceID: "dévice-ü")
    ),
    CrossFixture(
        name: "UnregisterDeviceResponse", text: "existed: true", expected: V1.UnregisterDeviceResponse(existed: true)
    ),
    CrossFixture(
        name: "GetDeviceRequest", text: #"device_id: "设备-1""#, expected: V1.GetDeviceRequest(deviceID: "设备-1")
    ),
    CrossFixture(
        name: "GetDeviceResponse", text: "registration { \(registrationText) }",
        expected: V1.GetDeviceResponse(registration: registration)
    ),
    CrossFixture(
        name: "GetDeviceResponse(empty registration)", text: "registration { }",
        expected: V1.GetDeviceResponse(registration: V1.DeviceRegistration())
    ),
    CrossFixture(
        name: "HealthCheckResponse(feeds, push, cluster)",
        text: """
            status: SERVING feeds { \(feedHealthText) } feeds { name: "sim" connected: true }
            push { \(pushStateText) } cluster { \(clusterHealthText) }
            """,
        expected: V1.HealthCheckResponse(
            status: .serving, feeds: [feedHealth, V1.FeedSourceHealth(name: "sim", connected: true)], push: pushState,
            cluster: clusterHealth
        )
    ),
    CrossFixture(name: "FeedSourceHealth", text: feedHealthText, expected: feedHealth),
    CrossFixture(name: "ClusterHealth", text: clusterHealthText, expected: clusterHealth),
    CrossFixture(name: "ClusterLease", text: leaseText, expected: lease),
    CrossFixture(name: "PushDeliveryState", text: pushStateText, expected: pushState),
    CrossFixture(name: "ServiceKey", text: serviceKeyText, expected: serviceKey),
    CrossFixture(
        name: "CreateKeyRequest", text: #"name: "clé-ü" scopes: "admin" scopes: "settings:read" scopes: "" "#,
        expected: V1.CreateKeyRequest(name: "clé-ü", scopes: ["admin", "settings:read", ""])
    ),
    CrossFixture(
        name: "CreateKeyResponse",
        text: #"key { \#(serviceKeyText) } token: "cwk_0123456789abcdef_sécret""#,
        expected: V1.CreateKeyResponse(key: serviceKey, token: "cwk_0123456789abcdef_sécret")
    ),
    CrossFixture(
        name: "ListKeysRequest", text: "include_revoked: true", expected: V1.ListKeysRequest(includeRevoked: true)
    ),
    CrossFixture(
        name: "ListKeysResponse",
        text: #"""
            keys { \#(serviceKeyText) }
            keys { id: "fedcba9876543210" name: "管理" scopes: "admin" created_at_ms: 1 }
            keys { }
            """#,
        expected: V1.ListKeysResponse(keys: [
            serviceKey, V1.ServiceKey(id: "fedcba9876543210", name: "管理", scopes: ["admin"], createdAtMs: 1),
            V1.ServiceKey(),
        ])
    ),
    CrossFixture(
        name: "RevokeKeyRequest", text: #"id: "cwk_0123456789abcdef_ß""#,
        expected: V1.RevokeKeyRequest(id: "cwk_0123456789abcdef_ß")
    ),
    CrossFixture(
        name: "RevokeKeyResponse", text: "key { \(serviceKeyText) }", expected: V1.RevokeKeyResponse(key: serviceKey)
    ),
    CrossFixture(
        name: "ResetDeviceRequest", text: #"device_id: "dévice-Ω" issue_secret: true"#,
        expected: V1.ResetDeviceRequest(deviceID: "dévice-Ω", issueSecret: true)
    ),
    CrossFixture(
        name: "ResetDeviceResponse", text: #"had_secret: true device_secret: "cwd_nouveau_sécret""#,
        expected: V1.ResetDeviceResponse(hadSecret: true, deviceSecret: "cwd_nouveau_sécret")
    ),
    CrossFixture(
        name: "StoredServiceKey",
        text: """
            id: "0123456789abcdef" name: "price-feeder – Zürich" scopes: "prices:publish" scopes: "admin"
            created_at_ms: -1700000000000 revoked_at_ms: -1 secret_sha256: \(secretSha256Text)
            """,
        expected: V1.StoredServiceKey(
            id: "0123456789abcdef", name: "price-feeder – Zürich", scopes: ["prices:publish", "admin"],
            createdAtMs: -1_700_000_000_000, revokedAtMs: -1, secretSha256: secretSha256
        )
    ),
    CrossFixture(
        name: "StoredDeviceSecret",
        text: #"secret_sha256: \#(secretSha256Text) issued_at_ms: -1 issued_by: "ResetDevice – réinitialisé""#,
        expected: V1.StoredDeviceSecret(
            secretSha256: secretSha256, issuedAtMs: -1, issuedBy: "ResetDevice – réinitialisé"
        )
    ),
]
