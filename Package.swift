// swift-tools-version: 6.0
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "ObservableDefaults",
    products: [
        .library(name: "ObservableDefaults", targets: ["ObservableDefaults"]),
    ],
    targets: [
        .target(name: "ObservableDefaults"),
        .executableTarget(
            name: "defaults-test-agent",
            dependencies: ["ObservableDefaults"],
            path: "Sources/defaults-test-agent"
        ),
        .testTarget(
            name: "ObservableDefaultsTests",
            dependencies: ["ObservableDefaults", "defaults-test-agent"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
