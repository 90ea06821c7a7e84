// swift-tools-version:6.0
import PackageDescription

/// Settings shared by every Swift target.
let swiftSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
  name: "innerpeace",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "innerpeace", targets: ["InnerPeaceCLI"]),
    .executable(name: "innerpeace-bench", targets: ["InnerPeaceBench"]),
    .library(name: "InnerPeace", targets: ["InnerPeace"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    .package(url: "https://github.com/apple/swift-nio-extras", from: "1.20.0"),
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.5.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
    .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
    .package(url: "https://github.com/swift-otel/swift-w3c-trace-context", from: "1.0.0"),
  ],
  targets: [
    // Cairo, Pango, fontconfig, libturbojpeg, libwebp, libavif, libdeflate, LittleCMS 2 and libhyphen,
    // through one shim header.
    .systemLibrary(
      name: "CInnerPeace",
      path: "Sources/CInnerPeace",
      pkgConfig: "pangocairo",
      providers: [
        .apt([
          "libcairo2-dev", "libpango1.0-dev", "libfontconfig-dev", "libturbojpeg0-dev", "libjpeg62-turbo-dev",
          "libwebp-dev",
          "libavif-dev",
          "libdeflate-dev", "libpng-dev", "liblcms2-dev", "libhyphen-dev",
        ])
      ]
    ),
    // The blur's pixel loops and the PNG encoder, in C so they vectorise; libdeflate for the
    // PNG's checksums and flat images.
    .target(name: "CInnerPeaceKernels", linkerSettings: [.linkedLibrary("deflate")]),
    // Spawning render worker processes and arming their parent-death signal.
    .target(name: "CInnerPeaceProcess"),
    // PNG decoding through libpng and the part of a JPEG a card shows through libjpeg (their
    // errors longjmp, which Swift cannot catch), colour management through LittleCMS 2 (pkg-config
    // lcms2), CMYK and EXIF orientation loops.
    .target(
      name: "CInnerPeaceCodecs",
      linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("lcms2"), .linkedLibrary("jpeg")]),
    // The bundled catalog (top-level Resources/) and fonts (top-level Fonts/), copied as they are.
    .target(
      name: "InnerPeaceResources",
      path: ".",
      exclude: [
        "README.md", "BENCHMARKS.md", "LICENSE", "Dockerfile", "compose.yaml", "Tests", "Sources/CInnerPeace",
        "Sources/CInnerPeaceKernels",
        "Sources/CInnerPeaceProcess", "Sources/CInnerPeaceCodecs", "Sources/InnerPeace",
        "Sources/InnerPeaceCLI", "Sources/InnerPeaceBench", "Sources/InnerPeaceServer", "docs",
        "Sources/InnerPeaceQuery", "Fuzz", "scripts", "deploy",
      ],
      sources: ["Sources/InnerPeaceResources"],
      resources: [.copy("Resources"), .copy("Fonts")],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "InnerPeace",
      dependencies: ["CInnerPeace", "CInnerPeaceKernels", "CInnerPeaceCodecs", "InnerPeaceResources"],
      swiftSettings: swiftSettings
    ),
    // The strict query-string decoder: no dependencies, so the fuzz target builds it cheaply.
    .target(name: "InnerPeaceQuery", swiftSettings: swiftSettings),
    .target(
      name: "InnerPeaceServer",
      dependencies: [
        "InnerPeace",
        "InnerPeaceResources",
        // libdeflate, for the gzip-compressed responses.
        "CInnerPeace",
        "CInnerPeaceProcess",
        "InnerPeaceQuery",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOExtras", package: "swift-nio-extras"),
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Instrumentation", package: "swift-distributed-tracing"),
        .product(name: "W3CTraceContext", package: "swift-w3c-trace-context"),
        .product(name: "UnixSignals", package: "swift-service-lifecycle"),
      ],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "InnerPeaceCLI",
      dependencies: [
        "InnerPeace",
        "CInnerPeaceKernels",
        "InnerPeaceServer",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
        // IOError's errno, for a listening socket's failure in the system's words; `health`'s one GET.
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "InnerPeaceBench",
      dependencies: ["InnerPeace", "CInnerPeace"],
      swiftSettings: swiftSettings
    ),
    // libFuzzer targets, built and run by scripts/fuzz.sh (with -sanitize=fuzzer,address and
    // -DFUZZING); in an ordinary build each one replays the input files it is given.
    .target(name: "CFuzzing", path: "Fuzz/CFuzzing"),
    .target(name: "FuzzSupport", dependencies: ["CFuzzing"], path: "Fuzz/Support", swiftSettings: swiftSettings),
    .executableTarget(
      name: "FuzzText", dependencies: ["InnerPeace", "FuzzSupport"], path: "Fuzz/Targets/FuzzText",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "FuzzCatalog", dependencies: ["InnerPeace", "FuzzSupport"], path: "Fuzz/Targets/FuzzCatalog",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "FuzzImages", dependencies: ["InnerPeace", "CInnerPeaceCodecs", "FuzzSupport"],
      path: "Fuzz/Targets/FuzzImages",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "FuzzEncoder", dependencies: ["InnerPeace", "FuzzSupport"], path: "Fuzz/Targets/FuzzEncoder",
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "FuzzQuery", dependencies: ["InnerPeaceQuery", "FuzzSupport"], path: "Fuzz/Targets/FuzzQuery",
      swiftSettings: swiftSettings),
    .testTarget(
      name: "InnerPeaceTests",
      dependencies: ["InnerPeace", "CInnerPeace"],
      resources: [.copy("Golden")],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "InnerPeaceServerTests",
      dependencies: [
        "CInnerPeace",
        "CInnerPeaceProcess",
        "InnerPeace",
        "InnerPeaceServer",
        "InnerPeaceQuery",
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "NIOExtras", package: "swift-nio-extras"),
        .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "InnerPeaceCLITests",
      dependencies: [
        "InnerPeace", "InnerPeaceCLI", "InnerPeaceServer", .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: swiftSettings
    ),
  ]
)
