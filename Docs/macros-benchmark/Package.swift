// swift-tools-version: 6.0
// The benchmark for Docs/macros.md ("Measurements"): `swift run -c release` in this directory.
import Foundation
import PackageDescription

// A path dependency's identity is its directory name (the checkout or worktree name).
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "macros-benchmark",
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "macros-benchmark",
            dependencies: [.product(name: "ObservableDefaults", package: root.lastPathComponent)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
