// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "ObservableDefaults",
    products: [
        .library(name: "ObservableDefaults", targets: ["ObservableDefaults"]),
        .executable(name: "defaults", targets: ["defaults"]),
        .executable(name: "defaults-demo", targets: ["defaults-demo"]),
        .executable(name: "defaults-bench", targets: ["defaults-bench"])
    ],
    targets: [
        // The macro plugin: the compiler's message loop (main.swift) and, through the symlink `Kit`, the lexer,
        // parser, expansions and diagnostics in Sources/DefaultsMacroKit (no swift-syntax). Not a library target
        // of their own: a plain `swift build` would compile them twice, for the plugin (host) and for nothing
        // but their tests. DefaultsMacroKitTests compiles the same files through its own `Kit` symlink.
        .macro(name: "ObservableDefaultsMacros"),
        .target(name: "ObservableDefaults", dependencies: ["ObservableDefaultsMacros"]),
        // Starts throwaway etcd processes on loopback ports for the tests and the demo (not a product).
        .target(name: "EtcdLauncher"),
        .executableTarget(
            name: "defaults-test-agent",
            dependencies: ["ObservableDefaults"],
            path: "Sources/defaults-test-agent"
        ),
        .executableTarget(
            name: "defaults",
            dependencies: ["ObservableDefaults"],
            path: "Sources/defaults"
        ),
        .executableTarget(
            name: "defaults-demo",
            dependencies: ["ObservableDefaults", "defaults", "EtcdLauncher"],
            path: "Sources/defaults-demo"
        ),
        .executableTarget(
            name: "defaults-bench",
            dependencies: ["ObservableDefaults", "EtcdLauncher"],
            path: "Sources/defaults-bench",
            // Macro/ holds every @ObservableDefaults row; the generator and compile-time scripts are not sources.
            exclude: ["Macro/generate-fanout-classes.sh", "Compile/time-macro-compile.sh"]
        ),
        // What several test targets share: temporary directories, bounded waiting (`eventually`), recorders of
        // changes and errors, the built executables, hand edits, a seeded generator.
        .target(name: "TestSupport", dependencies: ["ObservableDefaults"], path: "Tests/TestSupport"),
        .testTarget(
            name: "DefaultsBenchTests",
            dependencies: ["defaults-bench", "EtcdLauncher", "TestSupport"]
        ),
        .testTarget(
            name: "ObservableDefaultsTests",
            dependencies: ["ObservableDefaults", "defaults-test-agent", "EtcdLauncher", "TestSupport"]
        ),
        .testTarget(
            name: "DefaultsToolTests",
            dependencies: ["ObservableDefaults", "defaults", "defaults-demo", "EtcdLauncher", "TestSupport"]
        ),
        .testTarget(name: "DefaultsMacroKitTests", exclude: ["Snapshots"]),
        // Loaded with the test binary: points the suites directory at a temporary one before any test runs.
        .target(name: "TestEnvironment", path: "Tests/TestEnvironment"),
        .testTarget(
            name: "ObservableDefaultsMacroTests",
            dependencies: ["ObservableDefaults", "defaults-test-agent", "TestEnvironment", "TestSupport"]),
        // A module whose default isolation is the main actor, using the macros without
        // `defaultIsolationIsMainActor`.
        .testTarget(
            name: "DefaultIsolationMacroTests",
            dependencies: ["ObservableDefaults", "TestEnvironment", "TestSupport"],
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
        // Builds the DocC catalog with .ci/build-docs, so a broken link or an undocumented symbol fails `swift test`.
        .testTarget(name: "DocumentationTests", dependencies: ["ObservableDefaults", "TestSupport"]),
        // Real sources that exercise tricky syntax with the macros; compiled by `swift build --build-tests`.
        .testTarget(name: "MacroCompileTests", dependencies: ["ObservableDefaults"]),
        // The same `defaultIsolationIsMainActor: true` classes (a symbolic link to MacroCompileTests'
        // DefaultIsolationFlagClasses.swift) in Swift 5 language mode, with their runtime tests (linked into
        // ObservableDefaultsMacroTests and DefaultIsolationMacroTests too).
        .testTarget(
            name: "MacroCompileSwift5Tests",
            dependencies: ["ObservableDefaults", "TestEnvironment", "TestSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        )
    ],
    swiftLanguageModes: [.v6]
)

// Debug builds index our sources but not the toolchain's modules. By default a debug build rebuilds
// Foundation, Synchronization, Observation, Glibc and the standard library's overlays from their textual
// interfaces into its module cache only to index them: about a sixth of a clean build's CPU (Docs/benchmarks.md,
// "Clean debug build"). Tools version 6.2 lets a package used as a dependency carry the flag.
for target in package.targets {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [.unsafeFlags(["-index-ignore-system-modules"], .when(configuration: .debug))]
}
