// swift-tools-version: 6.0
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "ObservableDefaults",
    products: [
        .library(name: "ObservableDefaults", targets: ["ObservableDefaults"]),
        .executable(name: "defaults", targets: ["defaults"]),
        .executable(name: "defaults-demo", targets: ["defaults-demo"]),
    ],
    targets: [
        .target(name: "ObservableDefaults"),
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
            dependencies: ["ObservableDefaults", "defaults"],
            path: "Sources/defaults-demo"
        ),
        .testTarget(
            name: "ObservableDefaultsTests",
            dependencies: ["ObservableDefaults", "defaults-test-agent"]
        ),
        .testTarget(
            name: "DefaultsToolTests",
            dependencies: ["ObservableDefaults", "defaults", "defaults-demo"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
