// swift-tools-version: 6.1
// In-process benchmarks, kept out of the main package so `swift build` and `swift test`
// stay lean. Run: cd Benchmarks && swift package benchmark
import PackageDescription

let package = Package(
    name: "JukeboxBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "jukeboxd", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "JukeboxBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "JukeboxCore", package: "jukeboxd"),
            ],
            path: "Benchmarks/JukeboxBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
