import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under the system temporary directory (`TMPDIR`, which `TestEnvironment` points at a
/// directory of its own for the whole test run), removed when the value is released.
package final class TemporaryDirectory: Sendable {
    package let url: URL

    /// - Parameter label: part of the directory's name (letters and digits kept), to tell whose it is.
    package init(_ label: String = #function) {
        let name = "od-test-\(label.filter { $0.isLetter || $0.isNumber })-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(name, isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    package var path: String { url.path }

    /// The entry `name` in the directory (not created).
    package func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(at: url) }
}
