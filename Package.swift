// swift-tools-version: 6.0
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "ObservableDefaults",
    products: [
        .library(name: "ObservableDefaults", targets: ["ObservableDefaults"]),
        .executable(name: "defaults-bench", targets: ["defaults-bench"]),
    ],
    targets: [
        .target(name: "ObservableDefaults"),
        .executableTarget(
            name: "defaults-test-agent",
            dependencies: ["ObservableDefaults"],
            path: "Sources/defaults-test-agent"
        ),
        .executableTarget(
            name: "defaults-bench",
            dependencies: ["ObservableDefaults"],
            path: "Sources/defaults-bench",
            // Macro/ holds the @ObservableDefaults rows; it is compiled once the macros are on main (then
            // Groups/MacroRows.swift, the stand-in, goes and only the generator script stays excluded).
            exclude: ["Macro"]
        ),
        .testTarget(
            name: "DefaultsBenchTests",
            dependencies: ["defaults-bench"]
        ),
        .testTarget(
            name: "ObservableDefaultsTests",
            dependencies: ["ObservableDefaults", "defaults-test-agent"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
