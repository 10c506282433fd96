import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writes `contents` to `url` the way editors and tools do.
package enum HandEdit {
    /// vim, `sed -i`, most tools: write a temporary file and rename it over the original.
    package static func renameOver(_ url: URL, _ contents: String) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".edit-\(UInt32.random(in: 0 ... .max))")
        try Data(contents.utf8).write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
    }

    /// nano, `cp`, shell `>`: truncate the existing file and write into it.
    package static func truncateAndWrite(_ url: URL, _ contents: String) throws {
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(contents.utf8))
        try handle.close()
    }

    /// Delete the file, then create it anew.
    package static func deleteAndRecreate(_ url: URL, _ contents: String) throws {
        try FileManager.default.removeItem(at: url)
        try Data(contents.utf8).write(to: url)
    }
}
