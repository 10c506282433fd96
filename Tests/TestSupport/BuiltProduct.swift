import Foundation

/// This package's built executables (`defaults`, `defaults-demo`, `defaults-bench`, `defaults-test-agent`),
/// which live beside the test bundle.
package enum BuiltProduct {
    /// The products directory: where the running test bundle is.
    package static var directory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// The built executable `name`: beside the test bundle, beside the program that runs the tests, or in
    /// the package's `.build/debug`.
    package static func url(_ name: String) -> URL {
        var candidates = [directory.appendingPathComponent(name)]
        if let first = CommandLine.arguments.first {
            candidates.append(URL(fileURLWithPath: first).deletingLastPathComponent().appendingPathComponent(name))
        }
        // Tests/TestSupport/BuiltProduct.swift -> package root -> .build/debug
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/\(name)"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }
}
