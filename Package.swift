// swift-tools-version: 6.0
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "ObservableDefaults",
    products: [
        .library(name: "ObservableDefaults", targets: ["ObservableDefaults"]),
    ],
    targets: [
        // Lexer, parser, expansions and diagnostics of the macros (no swift-syntax).
        .target(name: "DefaultsMacroKit"),
        // The macro plugin: only the compiler's message loop.
        .macro(name: "ObservableDefaultsMacros", dependencies: ["DefaultsMacroKit"]),
        .target(name: "ObservableDefaults", dependencies: ["ObservableDefaultsMacros"]),
        .executableTarget(
            name: "defaults-test-agent",
            dependencies: ["ObservableDefaults"],
            path: "Sources/defaults-test-agent"
        ),
        .testTarget(
            name: "ObservableDefaultsTests",
            dependencies: ["ObservableDefaults", "defaults-test-agent"]
        ),
        .testTarget(name: "DefaultsMacroKitTests", dependencies: ["DefaultsMacroKit"], exclude: ["Snapshots"]),
        .testTarget(name: "ObservableDefaultsMacroTests", dependencies: ["ObservableDefaults", "defaults-test-agent"]),
        // Real sources that exercise tricky syntax with the macros; compiled by `swift build --build-tests`.
        .testTarget(name: "MacroCompileTests", dependencies: ["ObservableDefaults"]),
    ],
    swiftLanguageModes: [.v6]
)
