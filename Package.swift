// swift-tools-version:6.2
//
// CoinWatch: price-alert settings in LevelDB, live crypto prices and threshold
// alerts over a framed, multiplexed protobuf RPC protocol.
//
// Layers, bottom to top (each depends only on the ones below it; docs/ARCHITECTURE.md draws the graph and
// scripts/check-imports keeps the dependencies below equal to what the code imports):
//   C wrappers   CCoinWatchProto (protoc-c output), CLevelDB, CCoinWatchSystem, CCurl, COpenSSL, CNATS, CNGHTTP2
//   base         CoinWatchCore (Duration units, the clocks, the error shape)
//   wire         CoinWatchProto (messages, JSON mapping, Varint, ProtobufCursor), CoinWatchStore, CoinWatchLogging,
//                CoinWatchMetrics, CoinWatchCommandLine
//   values       CoinWatchModel (exact decimals, device ids, symbols)
//   engine       CoinWatchAlertEngine
//   runtime      CoinWatchRPC (epoll event loops, framing, the call dispatcher every transport shares)
//   transports   CoinWatchTLS (the TLS engine, TLS as a connection transform, crypto), CoinWatchConnect (the Connect
//                protocol over the dispatcher), CoinWatchWeb (the dashboard's files)
//   HTTP, push   CoinWatchHTTP (HTTP/1.1, HTTP/2 and gRPC on the RPC port, Connect and the dashboard over them),
//                CoinWatchPush (APNs over HTTP/2: libcurl on a thread of its own)
//   auth, client CoinWatchAuth (credentials, the method policy, limits, the Admin RPCs), CoinWatchClient
//   service      CoinWatchService
//   on service   CoinWatchFeeds (simulated, replayed and live exchange sources into the service's price hub),
//                CoinWatchCluster (cluster mode over NATS JetStream)
//   app support  CoinWatchCLI (all of `coinwatch`, a library so it can be tested), CoinWatchAlertBench (the
//                alert engine's benchmark, for coinwatch-bench only)
//   executables  coinwatchd, coinwatch, coinwatch-bench
//   test support CoinWatchTestSupport (helpers for the test targets), FuzzSupport (the fuzz targets' client socket)
//   tests        one test target per module, EndToEndTests
//   fuzz         FuzzConnection, FuzzMessages, FuzzJSON, FuzzHTTP1, FuzzHTTP2, FuzzCredentials, FuzzWebSocket,
//                FuzzVenues (Fuzz/; these and FuzzSupport are declared only when COINWATCH_FUZZ is set)
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The runtime and the service run every call and every price delivery through
/// loop-confined classes, a live venue reads every exchange message in one, and
/// the alert engine walks its index for every tick; profiling showed dynamic exclusivity checks (a thread-local access set per
/// property access) among the top costs there (about 3% of a start-up in the
/// engine). Release builds of those modules turn the runtime check off; debug
/// builds, which the tests run, keep it.
let hotPathSettings: [SwiftSetting] = swiftSettings + [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "CoinWatch",
    products: [
        .executable(name: "coinwatchd", targets: ["coinwatchd"]),
        .executable(name: "coinwatch", targets: ["coinwatch"]),
        .executable(name: "coinwatch-bench", targets: ["coinwatch-bench"]),
        // With the modules its API takes and returns (ExactDecimal, the V1 messages, RPCError), so a service imports
        // them through the product it depends on rather than by SwiftPM's leniency about transitive modules.
        .library(name: "CoinWatchClient", targets: ["CoinWatchClient", "CoinWatchModel", "CoinWatchProto", "CoinWatchRPC"]),
    ],
    targets: [
        // MARK: C wrappers
        .target(
            name: "CCoinWatchProto",
            linkerSettings: [.linkedLibrary("protobuf-c")]
        ),
        .systemLibrary(
            name: "CLevelDB",
            providers: [.apt(["libleveldb-dev"])]
        ),
        .target(
            name: "CCoinWatchSystem",
            cSettings: [.define("_GNU_SOURCE")]
        ),
        .systemLibrary(
            name: "CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CNATS",
            providers: [.apt(["libnats-dev"])]
        ),

        // MARK: Storage and wire
        .target(
            name: "CoinWatchCore",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoinWatchProto",
            dependencies: ["CCoinWatchProto", "CoinWatchCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoinWatchStore",
            dependencies: ["CLevelDB", "CCoinWatchSystem", "CoinWatchCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoinWatchLogging",
            dependencies: ["CoinWatchCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoinWatchTLS",
            dependencies: ["COpenSSL", "CoinWatchCore", "CoinWatchLogging", "CoinWatchRPC"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoinWatchMetrics",
            dependencies: ["CoinWatchCore"],
            swiftSettings: hotPathSettings
        ),
        .target(
            name: "CoinWatchModel",
            dependencies: ["CoinWatchProto", "CoinWatchCore"],
            swiftSettings: swiftSettings
        ),

        .target(
            name: "CoinWatchAlertEngine",
            dependencies: ["CoinWatchModel", "CoinWatchCore"],
            swiftSettings: hotPathSettings
        ),

        .target(
            name: "CoinWatchConnect",
            dependencies: ["CoinWatchRPC", "CoinWatchProto", "CoinWatchCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoinWatchWeb",
            swiftSettings: swiftSettings
        ),

        // MARK: Runtime
        .target(
            name: "CoinWatchRPC",
            dependencies: ["CCoinWatchSystem", "CoinWatchCore", "CoinWatchProto", "CoinWatchLogging", "CoinWatchMetrics"],
            swiftSettings: hotPathSettings
        ),

        .systemLibrary(
            name: "CNGHTTP2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        .target(
            name: "CoinWatchHTTP",
            dependencies: [
                "CNGHTTP2", "CoinWatchRPC", "CoinWatchProto", "CoinWatchMetrics", "CoinWatchLogging", "CoinWatchCore",
                "CoinWatchConnect", "CoinWatchWeb",
            ],
            swiftSettings: hotPathSettings
        ),
        // MARK: Push (APNs over HTTP/2: libcurl on a thread of its own)
        .target(
            name: "CoinWatchPush",
            dependencies: ["CCurl", "CoinWatchCore", "CoinWatchRPC", "CoinWatchLogging", "CoinWatchTLS"],
            swiftSettings: swiftSettings
        ),

        // MARK: Service and client
        .target(
            name: "CoinWatchAuth",
            dependencies: [
                "CoinWatchRPC", "CoinWatchStore", "CoinWatchModel", "CoinWatchProto", "CoinWatchLogging", "CoinWatchTLS",
                "CoinWatchCore", "CoinWatchMetrics",
            ],
            swiftSettings: hotPathSettings
        ),
        .target(
            name: "CoinWatchService",
            dependencies: [
                "CoinWatchRPC", "CoinWatchStore", "CoinWatchModel", "CoinWatchProto", "CoinWatchAlertEngine", "CoinWatchLogging",
                "CoinWatchCore", "CoinWatchMetrics", "CoinWatchAuth", "CoinWatchPush",
            ],
            swiftSettings: hotPathSettings
        ),
        // MARK: Feeds
        .target(
            name: "CoinWatchFeeds",
            dependencies: [
                "CoinWatchService", "CoinWatchRPC", "CoinWatchModel", "CoinWatchProto", "CoinWatchLogging", "CoinWatchTLS",
                "CoinWatchCore", "CoinWatchMetrics",
            ],
            swiftSettings: hotPathSettings
        ),
        .target(
            name: "CoinWatchCluster",
            dependencies: [
                "CNATS", "CoinWatchAuth", "CoinWatchCore", "CoinWatchLogging", "CoinWatchMetrics", "CoinWatchModel", "CoinWatchProto", "CoinWatchRPC",
                "CoinWatchService",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoinWatchClient",
            dependencies: ["CoinWatchRPC", "CoinWatchModel", "CoinWatchProto", "CoinWatchCore", "CoinWatchTLS"],
            swiftSettings: swiftSettings
        ),

        // MARK: Executables
        .target(
            name: "CoinWatchCommandLine",
            dependencies: ["CoinWatchCore"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "coinwatchd",
            dependencies: [
                "CoinWatchService", "CoinWatchFeeds", "CoinWatchHTTP", "CoinWatchConnect", "CoinWatchMetrics", "CoinWatchRPC",
                "CoinWatchModel", "CoinWatchStore", "CoinWatchLogging", "CoinWatchCommandLine", "CoinWatchAuth",
                "CoinWatchProto", "CoinWatchCore", "CoinWatchTLS", "CoinWatchCluster", "CoinWatchPush",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoinWatchCLI",
            dependencies: [
                "CoinWatchClient", "CoinWatchRPC", "CoinWatchModel", "CoinWatchProto", "CoinWatchCommandLine", "CoinWatchLogging",
                "CoinWatchCore", "CoinWatchTLS",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "coinwatch",
            dependencies: ["CoinWatchCLI", "CoinWatchCommandLine"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoinWatchAlertBench",
            dependencies: ["CoinWatchAlertEngine", "CoinWatchModel", "CoinWatchCore"],
            swiftSettings: hotPathSettings
        ),
        .executableTarget(
            name: "coinwatch-bench",
            dependencies: [
                "CoinWatchClient", "CoinWatchRPC", "CoinWatchProto", "CoinWatchModel", "CoinWatchAlertBench",
                "CoinWatchCommandLine", "CoinWatchCore", "CoinWatchTLS", "CoinWatchHTTP", "CoinWatchCluster",
                "CoinWatchFeeds", "CoinWatchMetrics",
            ],
            swiftSettings: hotPathSettings
        ),

        // MARK: Tests
        .target(
            name: "CoinWatchTestSupport",
            dependencies: ["CoinWatchCore"],
            path: "Tests/CoinWatchTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchCoreTests",
            dependencies: ["CoinWatchCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchLoggingTests",
            dependencies: ["CoinWatchLogging"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchProtoTests",
            dependencies: ["CoinWatchProto", "CoinWatchTestSupport", "CoinWatchModel"],
            exclude: ["Python"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchStoreTests",
            dependencies: ["CoinWatchStore", "CoinWatchTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchTLSTests",
            dependencies: ["CoinWatchTLS", "CoinWatchTestSupport", "CoinWatchRPC", "CoinWatchProto", "CoinWatchCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchPushTests",
            dependencies: ["CoinWatchPush", "CoinWatchTestSupport", "CoinWatchLogging"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchConnectTests",
            dependencies: ["CoinWatchConnect", "CoinWatchProto", "CoinWatchRPC", "CoinWatchLogging"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchWebTests",
            dependencies: ["CoinWatchWeb"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchModelTests",
            dependencies: ["CoinWatchModel", "CoinWatchProto"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchCommandLineTests",
            dependencies: ["CoinWatchCommandLine"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchAlertEngineTests",
            dependencies: ["CoinWatchAlertEngine", "CoinWatchModel"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchMetricsTests",
            dependencies: ["CoinWatchMetrics"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchHTTPTests",
            dependencies: [
                "CoinWatchHTTP", "CoinWatchConnect", "CoinWatchRPC", "CoinWatchProto", "CoinWatchMetrics", "CoinWatchTLS",
                "CoinWatchTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchAlertBenchTests",
            dependencies: ["CoinWatchAlertBench"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchRPCTests",
            dependencies: [
                "CoinWatchRPC", "CoinWatchProto", "CoinWatchModel", "CoinWatchCore", "CoinWatchMetrics", "CoinWatchTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchAuthTests",
            dependencies: [
                "CoinWatchAuth", "CoinWatchTestSupport", "CoinWatchProto", "CoinWatchModel", "CoinWatchStore", "CoinWatchRPC",
                "CoinWatchTLS", "CoinWatchLogging", "CoinWatchMetrics", "CoinWatchConnect", "CoinWatchCore",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchServiceTests",
            dependencies: [
                "CoinWatchService", "CoinWatchTestSupport", "CoinWatchProto", "CoinWatchModel", "CoinWatchStore",
                "CoinWatchRPC", "CoinWatchAlertEngine", "CoinWatchCore", "CoinWatchAuth", "CoinWatchPush", "CoinWatchLogging",
                "CoinWatchMetrics",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchFeedsTests",
            dependencies: [
                "CoinWatchFeeds", "CoinWatchService", "CoinWatchModel", "CoinWatchProto", "CoinWatchLogging", "CoinWatchCore",
                "CoinWatchMetrics", "CoinWatchTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchCLITests",
            dependencies: [
                "CoinWatchCLI", "CoinWatchClient", "CoinWatchCommandLine", "CoinWatchRPC", "CoinWatchProto", "CoinWatchModel",
                "CoinWatchTestSupport",
            ],
            exclude: ["Golden"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchClientTests",
            dependencies: ["CoinWatchClient", "CoinWatchModel", "CoinWatchProto", "CoinWatchRPC", "CoinWatchTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoinWatchClusterTests",
            dependencies: [
                "CoinWatchAuth", "CoinWatchCluster", "CoinWatchCore", "CoinWatchLogging", "CoinWatchMetrics", "CoinWatchModel", "CoinWatchProto", "CoinWatchRPC",
                "CoinWatchService", "CoinWatchStore", "CoinWatchTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "CoinWatchClient", "CoinWatchModel", "CoinWatchProto", "CoinWatchRPC", "CoinWatchTestSupport", "CoinWatchTLS",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// MARK: Fuzz targets
//
// libFuzzer supplies `main` for these, so they link only with `--sanitize=fuzzer`. They are declared only
// when COINWATCH_FUZZ is set, which `scripts/fuzz` does in its own scratch path: the normal build and test
// commands never see them.
if Context.environment["COINWATCH_FUZZ"] != nil {
    package.targets += [
        .target(
            name: "FuzzSupport",
            dependencies: ["CoinWatchCore", "CoinWatchTLS"],
            path: "Fuzz/FuzzSupport",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FuzzHTTP1",
            dependencies: ["CoinWatchHTTP"],
            path: "Fuzz/FuzzHTTP1",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FuzzHTTP2",
            dependencies: [
                "CoinWatchHTTP", "CoinWatchRPC", "CoinWatchProto", "CoinWatchCore", "CoinWatchLogging", "CoinWatchMetrics",
                "FuzzSupport",
            ],
            path: "Fuzz/FuzzHTTP2",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FuzzConnection",
            dependencies: ["CoinWatchRPC", "CoinWatchProto", "CoinWatchLogging", "CoinWatchTLS", "FuzzSupport"],
            path: "Fuzz/FuzzConnection",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FuzzCredentials",
            dependencies: ["CoinWatchAuth", "CoinWatchRPC", "CoinWatchProto", "CoinWatchModel"],
            path: "Fuzz/FuzzCredentials",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FuzzWebSocket",
            dependencies: ["CoinWatchFeeds"],
            path: "Fuzz/FuzzWebSocket",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FuzzVenues",
            dependencies: ["CoinWatchFeeds", "CoinWatchModel", "CoinWatchProto"],
            path: "Fuzz/FuzzVenues",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FuzzMessages",
            dependencies: ["CoinWatchProto"],
            path: "Fuzz/FuzzMessages",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FuzzJSON",
            dependencies: ["CoinWatchProto"],
            path: "Fuzz/FuzzJSON",
            swiftSettings: swiftSettings
        ),
    ]
}
