// swift-tools-version:6.2
//
// A service that uses CoinWatch through its client library, depending on the CoinWatch repository by version as
// any other package would. `scripts/test` builds and runs it against a real coinwatchd: it makes a throwaway git
// repository from the checkout, tags it 0.1.0 and points COINWATCH_PACKAGE_URL at it (run.sh does the same by
// hand).
import PackageDescription

/// Where the CoinWatch package comes from: COINWATCH_PACKAGE_URL when set (a `file://` URL of a local clone, as
/// the test script uses), else the checkout this example sits in.
let coinwatch = Context.environment["COINWATCH_PACKAGE_URL"]
    ?? "file://" + Context.packageDirectory + "/../.."

let package = Package(
    name: "CoinWatchClientExample",
    dependencies: [
        .package(url: coinwatch, from: "0.1.0"),
    ],
    targets: [
        .executableTarget(
            name: "coinwatch-client-example",
            dependencies: [.product(name: "CoinWatchClient", package: "coinwatch")],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
    ]
)
