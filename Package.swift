// swift-tools-version:6.1
import PackageDescription

/// `JUKEBOX_VERSION`, when a build is given one: a Debian version's characters only (digits,
/// letters, `.`, `+`, `~`, `-`), starting with a digit.
let buildVersion: String? = Context.environment["JUKEBOX_VERSION"].flatMap { version in
    if version.isEmpty { return nil }
    guard let first = version.first, first.isNumber, version.count <= 64,
          version.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".+~-".contains($0)) })
    else { fatalError("JUKEBOX_VERSION \"\(version)\" is not a version: digits, letters, . + ~ and -, starting with a digit") }
    return version
}

let package = Package(
    name: "jukeboxd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "jukeboxd", targets: ["jukeboxd"]),
        .executable(name: "jukebox", targets: ["jukebox"]),
        // For the benchmarks package in Benchmarks/.
        .library(name: "JukeboxCore", targets: ["JukeboxCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        // No traits: its default ones pull in full Foundation (about 10 MB of resident memory)
        // and swift-configuration; FoundationEssentials is enough.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        // PBKDF2 for the web remote's sessions file; the web remote's certificate keys.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        // HTTPS for the web remote: TLS (BoringSSL, built from source, no system OpenSSL), and
        // the certificate authority and server certificate it makes for itself.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.3.0"),
        // Fetching calendars by address (HTTPS with swift-nio-ssl).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // ESPHome's native API messages (generated once by scripts/esphome/generate.sh).
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
    ],
    targets: [
        // C libraries: found by pkg-config; each is imported by exactly one Swift file.
        .systemLibrary(
            name: "CALSA", pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]
        ),
        .systemLibrary(
            name: "CSndFile", pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]
        ),
        .systemLibrary(
            name: "CSoxr", pkgConfig: "soxr",
            providers: [.apt(["libsoxr-dev"])]
        ),
        .systemLibrary(
            name: "CEBUR128", pkgConfig: "libebur128",
            providers: [.apt(["libebur128-dev"])]
        ),
        .systemLibrary(
            name: "CICal", pkgConfig: "libical",
            providers: [.apt(["libical-dev"])]
        ),
        .systemLibrary(
            name: "CAvahi", pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]
        ),
        // iCalendar through libical: a calendar's events and an RRULE's dates, in Swift types
        // only. JukeboxCore's day plans stand on it.
        .target(name: "JukeboxCalendar", dependencies: ["CICal"]),
        // Calendars fetched by address: AsyncHTTPClient, behind the core's `CalendarFetcher`.
        .target(
            name: "JukeboxFetch",
            dependencies: [
                "JukeboxCore", "JukeboxCalendar",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),

        // ESPHome's native API, with no I/O and nothing of the core: Noise, frames, the
        // server's side of a connection, and the messages used.
        .target(
            name: "ESPHomeAPI",
            dependencies: [
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // Services announced on the local network (mDNS, DNS-SD) through avahi-daemon, in Swift
        // types only: the one target that knows avahi.
        .target(name: "JukeboxAvahi", dependencies: ["CAvahi"]),

        // Home Assistant's media player: ESPHome's native API as a front end, on swift-nio.
        .target(
            name: "JukeboxESPHome",
            dependencies: [
                "ESPHomeAPI", "JukeboxAvahi", "JukeboxCore", "JukeboxDispatch", "JukeboxProtocol", "JukeboxFiles",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // Files and users, as both sides see them: reading and writing files within limits
        // and atomically, the words for what went wrong, a user's name for messages, and the
        // thread that blocking calls run on.
        .target(name: "JukeboxFiles"),
        // The audio layer the outputs and decoders stand on, as MPD's output plugins see only
        // OutputAPI.hxx: the sink protocol, audio formats and blocks, conversion, device
        // errors, and the decoder protocol. No logging, no session.
        .target(name: "JukeboxAudio", dependencies: ["JukeboxFiles"]),
        // A thing the duck policy lowers while a clip sounds (read its level, set it, over a
        // bounded connection), with nothing of the core: the players in JukeboxDuck are
        // written against it, and the policy (`Ducker`) in JukeboxCore drives them.
        .target(name: "JukeboxDuckTarget"),
        .target(
            name: "JukeboxCore",
            dependencies: [
                "JukeboxAudio", "JukeboxProtocol", "JukeboxDuckTarget", "JukeboxCalendar",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // What the daemon and the `jukebox` client share: the JSON-RPC types and where the
        // control socket lives. No dependencies, so the client stays small and starts fast.
        .target(name: "JukeboxProtocol", dependencies: ["JukeboxFiles", "CJukeboxBuild"]),
        // The version a build was given, when it was given one: `JUKEBOX_VERSION=0.1.1 swift
        // build` (scripts/package.sh --version), so that a package can be numbered above its
        // source's version (an upgrade's test, a snapshot) without an edit to the source.
        .target(
            name: "CJukeboxBuild",
            cSettings: buildVersion.map { [.define("JUKEBOX_VERSION", to: "\"\($0)\"")] } ?? []
        ),
        // JSON-RPC dispatch: a request's bytes to a core command and its result back, with no
        // I/O. The control socket and the HTTP API both answer through it.
        .target(name: "JukeboxDispatch", dependencies: ["JukeboxCore", "JukeboxProtocol"]),
        // The control socket: a Unix-socket server on NIO around the dispatcher.
        .target(
            name: "JukeboxControl",
            dependencies: [
                "JukeboxCore", "JukeboxDispatch", "JukeboxProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The web front end: the HTTP API (the socket's JSON-RPC over POST /rpc, events as
        // Server-Sent Events, uploads) and, next, the phone page.
        // A small MQTT 3.1.1 client on swift-nio: no MQTT package is in the package set.
        .target(
            name: "MQTT",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MQTT as a front end: state topics, commands and Home Assistant discovery.
        .target(
            name: "JukeboxMQTT",
            dependencies: [
                "JukeboxCore", "JukeboxDispatch", "JukeboxProtocol", "MQTT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The other players the session's `duck` lowers: MPD and snapclients, on swift-nio.
        // They know the duck target's protocol, not the core.
        .target(
            name: "JukeboxDuck",
            dependencies: [
                "JukeboxDuckTarget", "JukeboxProtocol", "JukeboxFiles",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(
            name: "JukeboxHTTP",
            dependencies: [
                "JukeboxCore", "JukeboxDispatch", "JukeboxProtocol", "JukeboxFiles",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "JukeboxALSA",
            dependencies: ["CALSA", "JukeboxAudio", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "JukeboxSndFile",
            dependencies: ["CSndFile", "JukeboxAudio"]
        ),
        // Sample-rate conversion (libsoxr) for outputs with a fixed stream format.
        .target(name: "JukeboxResample", dependencies: ["CSoxr", "JukeboxAudio"]),
        // Loudness (EBU R 128, libebur128), to bring every clip to the session's target.
        .target(name: "JukeboxLoudness", dependencies: ["CEBUR128", "JukeboxAudio"]),
        // The Snapcast output: PCM into snapserver's pipe source, for multi-room playback.
        .target(
            name: "JukeboxSnapcast",
            dependencies: ["JukeboxAudio"]
        ),
        // The music bed: music from a pipe, with the clips mixed over it.
        .target(
            name: "JukeboxBed",
            dependencies: ["JukeboxAudio", .product(name: "Logging", package: "swift-log")],
            // The true-peak limiter measures 8 points between every two samples (7 × 32
            // multiply-adds a sample) while the mix is near its ceiling: unoptimised, that
            // takes half a core, and the debug daemon the tests run could not keep real time.
            swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]
        ),
        .executableTarget(
            name: "jukeboxd",
            dependencies: [
                "JukeboxCore", "JukeboxALSA", "JukeboxSnapcast", "JukeboxBed", "JukeboxSndFile", "JukeboxResample", "JukeboxLoudness", "JukeboxControl", "JukeboxDispatch", "JukeboxProtocol", "JukeboxHTTP", "JukeboxMQTT", "JukeboxDuck", "JukeboxFetch", "JukeboxESPHome",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // Release builds link with lld, which packs the 66 000 relative relocations of a
            // static Swift runtime into 13 KB (DT_RELR, glibc 2.36 and later) and exports no
            // symbols: otherwise the loader reads 1.6 MB of relocations and every library's
            // symbol lookups walk 22 000 exported names, all resident for the daemon's life.
            // It also puts the functions the daemon runs first and together
            // (scripts/link-order.sh), so far fewer pages of code are mapped.
            linkerSettings: [.unsafeFlags(
                ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
                 "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/scripts/link-order.txt", "-Xlinker", "--no-warn-symbol-ordering"],
                .when(platforms: [.linux], configuration: .release))]
        ),

        .executableTarget(
            name: "jukebox",
            dependencies: [
                "JukeboxProtocol", "JukeboxFiles",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // Release builds are fully static: no dynamic loader, no 38 000 relocations and no
            // libstdc++ to load, which was over a third of a `jukebox status` call. The three
            // libraries are what that link lacks when the build does not pass
            // --static-swift-stdlib. (The daemon stays dynamic: libasound dlopens its plugins.)
            // Like the daemon, it links with lld and puts first the functions its commands run
            // (scripts/link-order.sh writes scripts/client-link-order.txt), so a call maps
            // fewer pages of code as it starts.
            linkerSettings: [.unsafeFlags(
                ["-static-executable", "-Xlinker", "-l_FoundationCollections", "-Xlinker", "-l_FoundationCShims", "-Xlinker", "-lswiftSynchronization",
                 "-use-ld=lld", "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/scripts/client-link-order.txt",
                 "-Xlinker", "--no-warn-symbol-ordering"],
                .when(configuration: .release))]
        ),

        .testTarget(
            name: "JukeboxCoreTests",
            dependencies: [
                "JukeboxCore", "JukeboxCalendar", "JukeboxTestSupport", "JukeboxCoreTestSupport", "JukeboxSndFile",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "JukeboxProtocolTests", dependencies: ["JukeboxProtocol"]),
        .testTarget(name: "ESPHomeAPITests", dependencies: ["ESPHomeAPI"]),
        .testTarget(name: "JukeboxESPHomeTests", dependencies: [
            "JukeboxESPHome", "JukeboxAvahi", "ESPHomeAPI", "JukeboxCore", "JukeboxCoreTestSupport", "JukeboxTestSupport",
            .product(name: "SwiftProtobuf", package: "swift-protobuf"), .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .testTarget(name: "JukeboxCalendarTests", dependencies: ["JukeboxCalendar", "JukeboxFiles"]),
        .testTarget(name: "JukeboxFetchTests", dependencies: ["JukeboxFetch", "JukeboxCalendar", "JukeboxCore", "JukeboxTestSupport"]),
        .testTarget(name: "JukeboxCLITests", dependencies: [
            "jukebox", "JukeboxProtocol", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "MQTTTests", dependencies: [
            "MQTT", "JukeboxMQTT", "JukeboxCore", "JukeboxTestSupport",
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"), .product(name: "Subprocess", package: "swift-subprocess"),
        ]),
        .testTarget(name: "JukeboxSnapcastTests", dependencies: ["JukeboxSnapcast", "JukeboxResample", "JukeboxCore", "JukeboxTestSupport"]),
        .testTarget(name: "JukeboxBedTests", dependencies: [
            "JukeboxBed", "JukeboxCore", "JukeboxCoreTestSupport", "JukeboxTestSupport", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "JukeboxHTTPTests", dependencies: ["JukeboxHTTP", "JukeboxCore", "JukeboxCoreTestSupport", "JukeboxTestSupport"]),
        .testTarget(name: "JukeboxDuckTests", dependencies: [
            "JukeboxDuck", "JukeboxCore", "JukeboxTestSupport",
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        // WAV writing and temporary folders shared by the tests that do real I/O.
        .target(
            name: "JukeboxTestSupport",
            dependencies: [.product(name: "Logging", package: "swift-log"), .product(name: "Subprocess", package: "swift-subprocess")],
            path: "Tests/JukeboxTestSupport"),
        .testTarget(
            name: "JukeboxSndFileTests",
            dependencies: ["JukeboxSndFile", "JukeboxCore", "JukeboxTestSupport"]
        ),
        .testTarget(
            name: "JukeboxLoudnessTests",
            dependencies: ["JukeboxLoudness", "JukeboxSndFile", "JukeboxCore", "JukeboxTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "JukeboxALSATests",
            dependencies: [
                "JukeboxALSA", "JukeboxSndFile", "JukeboxCore", "JukeboxTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A real core for the front ends' tests.
        .target(
            name: "JukeboxCoreTestSupport",
            dependencies: ["JukeboxCore", "JukeboxSndFile", "JukeboxTestSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/JukeboxCoreTestSupport"),
        .testTarget(name: "JukeboxAudioTests", dependencies: ["JukeboxAudio", "JukeboxResample"]),
        .testTarget(
            name: "JukeboxDispatchTests",
            dependencies: [
                "JukeboxDispatch", "JukeboxCore", "JukeboxProtocol", "JukeboxCoreTestSupport", "JukeboxTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "JukeboxControlTests",
            dependencies: [
                "JukeboxControl", "JukeboxDispatch", "JukeboxCore", "JukeboxProtocol", "JukeboxSndFile", "JukeboxTestSupport", "JukeboxCoreTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The daemon's own parts that no library holds (the journal's log handler).
        .testTarget(
            name: "JukeboxdTests",
            dependencies: ["jukeboxd", "JukeboxTestSupport", "JukeboxProtocol", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "JukeboxTestSupport", "JukeboxCore", "JukeboxProtocol", "jukeboxd",
                .product(name: "Subprocess", package: "swift-subprocess"),
            ]
        ),
    ]
)
