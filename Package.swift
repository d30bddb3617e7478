// swift-tools-version:6.0
import PackageDescription

// Counterpoint: a real-time play-counter service. One folder per module under Sources/;
// each C library is reached through exactly one system-library target and wrapped by
// exactly one Swift module, so C pointers never travel further than that module.

let package = Package(
    name: "Counterpoint",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "counterpoint", targets: ["counterpoint"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
    ],
    targets: [
        // MARK: C libraries from Debian, one system-library target each.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CRdKafka", pkgConfig: "rdkafka", providers: [.apt(["librdkafka-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCrypt", pkgConfig: "libcrypt", providers: [.apt(["libcrypt-dev"])]),

        // MARK: The pure domain: events, validation, hours, the merge rule. No C, no I/O.
        .target(name: "CounterpointCore"),

        // MARK: The runtime every long-running part shares: one lock, one thread type, one
        // periodic thread, one way to run as a swift-service-lifecycle Service, component health.
        .target(name: "Runtime", dependencies: [
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),

        // MARK: Wrappers, one per C library.
        .target(name: "SQLiteDB", dependencies: ["CSQLite"]),
        .target(name: "PostgresDB", dependencies: ["CPostgres"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "Runtime"]),
        .target(name: "Credentials", dependencies: ["CCrypt", "Runtime"]),
        .target(name: "EventLogs", dependencies: ["CZlib", "CounterpointCore"]),
        .target(name: "Kafka", dependencies: ["CRdKafka", "Runtime", .product(name: "Logging", package: "swift-log")]),

        // MARK: Services built on them.
        .target(name: "CounterStore", dependencies: ["SQLiteDB", "PostgresDB", "CounterpointCore", "Runtime"]),
        .target(name: "BatchJob", dependencies: [
            "Runtime",
            "CounterpointCore", "EventLogs", "CounterStore",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "Generator", dependencies: ["CounterpointCore", "EventLogs", "Runtime"]),
        .target(name: "Replay", dependencies: [
            "Runtime",
            "Kafka", "EventLogs", "CounterpointCore", "Generator",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "Archive", dependencies: [
            "Runtime",
            "Kafka", "EventLogs", "CounterpointCore",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
        ]),
        .target(name: "Realtime", dependencies: [
            "Runtime",
            "Kafka", "CounterStore", "CounterpointCore",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
        ]),
        .target(name: "Reader", dependencies: [
            "Runtime",
            "CounterpointCore", "CounterStore", "HTTPServer", "Credentials",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ], resources: [
            // The stats page, compiled into the binary as byte arrays (`PackageResources`).
            .embedInCode("Dashboard/page.html"), .embedInCode("Dashboard/page.css"),
            .embedInCode("Dashboard/page.js"), .embedInCode("Dashboard/charts.js"), .embedInCode("Dashboard/lists.js"),
        ]),

        // MARK: The composition root: `build…(configuration)` for every long-running command,
        // called by the executable and by the tests alike.
        .target(name: "CounterpointApp", dependencies: [
            "CounterpointCore", "CounterStore", "BatchJob", "Generator", "Reader", "Replay", "Archive",
            "Realtime", "Kafka", "Runtime", "HTTPServer", "EventLogs",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),

        // MARK: The executable: a thin shell that parses flags and calls the builders above.
        .executableTarget(name: "counterpoint", dependencies: [
            "CounterpointApp",
            "CounterpointCore", "CounterStore", "BatchJob", "Generator", "Reader", "EventLogs", "Replay", "Archive",
            "Realtime", "Kafka", "Runtime", "HTTPServer",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),

        // MARK: Benchmark fixtures, kept beside the load test.
        .executableTarget(name: "counterpoint-store-fixture", dependencies: ["CounterStore", "CounterpointCore"],
                          path: "loadtest/StoreFixture"),
        .executableTarget(name: "counterpoint-bench-history", dependencies: ["CounterStore", "CounterpointCore", "CoreTestSupport", "Generator"],
                          path: "loadtest/HistoryBench"),

        // MARK: Tests, one target per module plus end-to-end tests of the executable, and the
        // helpers they share.
        .target(name: "HTTPTestClient", path: "Tests/Support/HTTPTestClient"),
        .target(name: "Patience", dependencies: ["Runtime"], path: "Tests/Support/Patience"),
        .target(name: "Scratch", path: "Tests/Support/Scratch"),
        .target(name: "LogCapture", dependencies: ["Runtime", .product(name: "Logging", package: "swift-log")],
                path: "Tests/Support/LogCapture"),
        .target(name: "Programs", dependencies: ["Patience", "Runtime", "Scratch"], path: "Tests/Support/Programs"),
        .target(name: "CoreTestSupport", dependencies: ["CounterpointCore"], path: "Tests/Support/CoreTestSupport"),
        .testTarget(name: "CounterpointCoreTests", dependencies: ["Patience", "CoreTestSupport", "CounterpointCore", "Generator"]),
        .testTarget(name: "RuntimeTests", dependencies: [
            "Patience", "Scratch",
            "Runtime", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "SQLiteDBTests", dependencies: ["Patience", "SQLiteDB", "Scratch"]),
        .target(name: "PostgresTestServer", dependencies: ["PostgresDB", "Patience", "Programs", "Runtime"], path: "Tests/Support/PostgresTestServer"),
        .target(name: "KafkaTestSupport", dependencies: ["Kafka", "Programs", "Runtime", .product(name: "Logging", package: "swift-log")],
                path: "Tests/Support/KafkaTestSupport"),
        .testTarget(name: "PostgresDBTests", dependencies: ["Patience", "PostgresDB", "PostgresTestServer", "CounterpointCore", "Generator"]),
        .target(name: "StoreTestSupport", dependencies: ["CounterStore", "PostgresTestServer", "Scratch"],
                path: "Tests/Support/StoreTestSupport"),
        .testTarget(name: "CounterStoreTests", dependencies: [
            "Patience", "CoreTestSupport",
            "CounterStore", "CounterpointCore", "SQLiteDB", "PostgresDB", "PostgresTestServer", "Generator", "Runtime", "Scratch",
        ]),
        .testTarget(name: "HTTPServerTests", dependencies: ["Patience", "HTTPServer", "HTTPTestClient", "Runtime"]),
        .target(name: "SecurityFixtures", dependencies: ["Programs"], path: "Tests/Support/SecurityFixtures"),
        .testTarget(name: "CredentialsTests", dependencies: ["Patience", "Credentials", "Programs", "Runtime", "SecurityFixtures", "Scratch"]),
        .testTarget(name: "EventLogsTests", dependencies: ["Patience", "EventLogs", "CounterpointCore", "Programs", "Runtime", "Scratch"]),
        .testTarget(name: "GeneratorTests", dependencies: ["Patience", "Generator", "EventLogs", "CounterpointCore", "Runtime", "Scratch"]),
        .testTarget(name: "KafkaTests", dependencies: ["Kafka", "KafkaTestSupport", "LogCapture", "Runtime", "Patience"]),
        .testTarget(name: "ReplayTests", dependencies: [
            "Replay", "Kafka", "EventLogs", "CounterpointCore", "Generator", "Runtime", "Patience", "Programs", "Scratch", "KafkaTestSupport",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "BatchJobTests", dependencies: [
            "Patience",
            "BatchJob", "CounterStore", "EventLogs", "CounterpointCore", "Generator", "StoreTestSupport",
        ]),
        .testTarget(name: "ReaderTests", dependencies: [
            "Patience",
            "Reader", "CounterStore", "CounterpointCore", "HTTPServer", "HTTPTestClient", "StoreTestSupport", "Credentials", "Runtime",
            "SecurityFixtures", "Programs", "Scratch", "LogCapture", "CoreTestSupport", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "ArchiveTests", dependencies: [
            "Archive", "Kafka", "EventLogs", "CounterpointCore", "BatchJob", "CounterStore", "Generator", "LogCapture", "Patience", "Programs", "Runtime",
        ]),
        .testTarget(name: "RealtimeTests", dependencies: [
            "Realtime", "Kafka", "CounterStore", "SQLiteDB", "PostgresDB", "CounterpointCore", "EventLogs", "Generator",
            "PostgresTestServer", "StoreTestSupport", "KafkaTestSupport", "Patience", "Programs", "Runtime", "Scratch",
        ]),
        .testTarget(name: "CounterpointAppTests", dependencies: [
            "CounterpointApp", "Archive", "BatchJob", "CounterStore", "CounterpointCore", "HTTPServer", "HTTPTestClient", "Kafka",
            "Reader", "Realtime", "Replay", "Patience", "Scratch", "LogCapture",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .testTarget(name: "EndToEndTests", dependencies: [
            "CounterpointCore", "HTTPTestClient", "Kafka", "PostgresTestServer", "SecurityFixtures", "Patience", "Programs", "Scratch",
        ]),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: libFuzzer targets (docs/fuzzing.md). Declared only when `scripts/fuzz` builds them, with
// `-sanitize=fuzzer,address` into a scratch path of their own: they call libFuzzer's driver, so an
// ordinary `swift build` could not link them, and it never sees them.
if Context.environment["COUNTERPOINT_FUZZ"] == "1" {
    package.targets += [
        .systemLibrary(name: "CLibFuzzer", path: "fuzz/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "fuzz/FuzzSupport"),
        .executableTarget(name: "FuzzEventParser", dependencies: ["FuzzSupport", "CounterpointCore"], path: "fuzz/Targets/FuzzEventParser"),
        .executableTarget(name: "FuzzRequestTarget", dependencies: ["FuzzSupport", "HTTPServer", "Reader", "CounterpointCore"],
                          path: "fuzz/Targets/FuzzRequestTarget"),
        .executableTarget(name: "FuzzDimensionBlob", dependencies: ["FuzzSupport", "CounterpointCore"], path: "fuzz/Targets/FuzzDimensionBlob"),
        .executableTarget(name: "FuzzSketch", dependencies: ["FuzzSupport", "CounterpointCore"], path: "fuzz/Targets/FuzzSketch"),
    ]
}
