import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// File writes without the library: what an editor or a script does.
enum RawFile {
    /// Writes `bytes` to a temporary file beside `path` and renames it over `path` (a rename-over save).
    /// Returns the monotonic time taken just before `rename(2)`, the moment the change becomes visible.
    @discardableResult
    static func renameOver(_ path: String, _ bytes: [UInt8]) -> Int {
        let temporary = path + ".~edit"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { fail("cannot create \(temporary): errno \(errno)") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                fail("cannot write \(temporary): errno \(errno)")
            }
            written += count
        }
        close(descriptor)
        let stamp = monotonicNanoseconds()
        guard rename(temporary, path) == 0 else { fail("cannot rename over \(path): errno \(errno)") }
        return stamp
    }

    /// Reads a whole (small or large) file.
    static func readAll(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return bytes
    }
}
