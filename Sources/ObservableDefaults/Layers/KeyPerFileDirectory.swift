import Foundation

/// A key-per-file directory, as Kubernetes mounts a ConfigMap or Secret: each regular file is a key (its
/// name) and its contents the value (one trailing newline dropped, typed as a setting's text; contents
/// that are not UTF-8 are data).
///
/// Kubernetes makes each key a symlink into `..data`, itself a symlink to a timestamped directory, and
/// updates the volume by renaming a new `..data` over the old one: reading after that rename sees the new
/// set whole. Names starting with `.` are not keys. A symlink is followed only to a file inside the volume;
/// a file over ``sizeLimit`` is not read. Each such file is a problem of its own, and the other keys are
/// read.
struct KeyPerFileDirectory: Sendable {
    /// The largest file read as a value (1 MB, Kubernetes' own limit for a ConfigMap).
    static let sizeLimit = 1 << 20

    let url: URL

    /// What a read found: the keys, and the files passed over with why (by file name).
    struct Contents {
        var values: [ExactKey: LayerEntry] = [:]
        var problems: [String: DefaultsError] = [:]
    }

    /// Reads every key; a missing directory holds none.
    func read() throws(DefaultsError) -> Contents {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return Contents() }
            throw DefaultsError(.fileSystem, message: "cannot list the key-per-file directory", fileURL: url)
        }
        let volume: String
        do {
            volume = try FileSystem.resolvedPath(url.path)
        } catch {
            if error.errno.isMissingPath { return Contents() }
            throw DefaultsError(error, "cannot resolve the key-per-file directory", fileURL: url)
        }
        var contents = Contents()
        for name in names where !name.hasPrefix(".") {
            let file = url.appendingPathComponent(name)
            do throws(DefaultsError) {
                if let value = try Self.value(of: file, inside: volume) {
                    contents.values[ExactKey(name)] = LayerEntry(value: value, origin: .keyPerFile(file))
                }
            } catch {
                contents.problems[name] = error
            }
        }
        return contents
    }

    /// The value of the file at `file` (`nil`: not a regular file, e.g. a directory, or gone meanwhile).
    private static func value(of file: URL, inside volume: String) throws(DefaultsError) -> DefaultsValue? {
        let resolved: String
        do {
            resolved = try FileSystem.resolvedPath(file.path)
        } catch {
            if error.errno.isMissingPath { return nil }
            throw DefaultsError(error, "cannot resolve the key file", fileURL: file)
        }
        guard resolved.hasPrefix(volume + "/") else {
            throw DefaultsError(
                .untrustedFile,
                message: "ignored: the key file is a symlink to \(resolved), outside the volume \(volume)",
                fileURL: file)
        }
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor(opening: resolved, .readOnly)
        } catch {
            if error.errno.isMissingPath { return nil }
            throw DefaultsError(error, "cannot open the key file", fileURL: file)
        }
        let status: FileStatus
        do {
            status = try descriptor.status()
        } catch {
            throw DefaultsError(error, "cannot stat the key file", fileURL: file)
        }
        guard status.kind == .regular else { return nil }
        guard status.size <= sizeLimit else {
            throw DefaultsError(
                .unsupportedValue,
                message: "ignored: the key file holds \(status.size) bytes; the limit is \(sizeLimit) (1 MB)",
                fileURL: file)
        }
        let bytes: Data
        do {
            bytes = try descriptor.readAll(expectedSize: Int(status.size))
        } catch {
            throw DefaultsError(error, "cannot read the key file", fileURL: file)
        }
        guard bytes.count <= sizeLimit else {
            throw DefaultsError(
                .unsupportedValue, message: "ignored: the key file holds more than \(sizeLimit) bytes (1 MB)",
                fileURL: file)
        }
        guard var text = String(validating: bytes, as: UTF8.self) else { return .data(bytes) }
        if text.hasSuffix("\r\n") { text.removeLast() } else if text.hasSuffix("\n") { text.removeLast() }
        return DefaultsValue(settingText: text)
    }
}
