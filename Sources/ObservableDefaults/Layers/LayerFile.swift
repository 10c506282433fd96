import Foundation

/// One file of a layer (a managed file, a system file, the global domain's file): where it may be, whether
/// its owner and mode must be checked, and reading it.
///
/// `NAME.json` is used when it exists, else `NAME.plist`. A file that does not exist gives no values; one
/// that cannot be used (it does not parse, it is not trusted, it cannot be read) throws an error naming it.
struct LayerFile: Sendable {
    /// The paths of `NAME.json` and `NAME.plist` in the layer's directory, in the order they are tried (paths,
    /// not URLs: a URL made by appending a component asks the file system whether it is a directory).
    let candidates: [String]
    /// The candidates' names, and the directory holding them (without a trailing `/`).
    let names: [String]
    let directory: String
    /// Whether the file must be owned by root or this process's user and not writable by group or others
    /// (dconf's and sudo's rule for files an administrator owns).
    let checksTrust: Bool
    /// The origin of a value read from the file at a URL.
    let origin: @Sendable (URL) -> DefaultsOrigin

    /// The layer file of suite `name` in the directory at `path`.
    init(name: String, directory path: String, checksTrust: Bool, origin: @escaping @Sendable (URL) -> DefaultsOrigin) {
        let directory = path.hasSuffix("/") ? path : path + "/"
        names = [name + ".json", name + ".plist"]
        candidates = names.map { directory + $0 }
        self.directory = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.checksTrust = checksTrust
        self.origin = origin
    }

    /// The paths to watch.
    var paths: [String] { candidates }

    /// The file `NAME.json`, for messages.
    var mainURL: URL { URL(fileURLWithPath: candidates[0], isDirectory: false) }

    /// The values of the first candidate that exists, or none. With `absence` (a suite opening, after
    /// ``LayerFileAbsence/catchUp()``), a candidate known absent is not opened, and one found missing is noted.
    func read(absence: LayerFileAbsence? = nil) throws(DefaultsError) -> [ExactKey: LayerEntry] {
        for (index, path) in candidates.enumerated() {
            if let absence, absence.isAbsent(names[index], in: directory) { continue }
            guard let bytes = try readBytes(path) else {
                absence?.noteMissing(path)
                continue
            }
            let url = URL(fileURLWithPath: path, isDirectory: false)
            let format: SuiteFormat = index == 0 ? .json : .propertyList
            let values = try format.decode(bytes, fileURL: url)
            let origin = origin(url)
            return values.mapValues { LayerEntry(value: $0, origin: origin) }
        }
        return [:]
    }

    /// The bytes of the file at `path` (`nil`: it does not exist), after the trust check of the very file
    /// opened.
    private func readBytes(_ path: String) throws(DefaultsError) -> Data? {
        let file: FileDescriptor
        do {
            file = try FileDescriptor(opening: path, .readOnly)
        } catch {
            if error.errno.isMissingPath { return nil }
            let url = URL(fileURLWithPath: path, isDirectory: false)
            throw DefaultsError(error, "cannot open the layer file for reading", fileURL: url)
        }
        let url = URL(fileURLWithPath: path, isDirectory: false)
        let status: FileStatus
        do {
            status = try file.status()
        } catch {
            throw DefaultsError(error, "cannot stat the layer file", fileURL: url)
        }
        guard status.kind == .regular else {
            throw DefaultsError(
                .fileSystem, message: "the layer file is not a regular file; expected a JSON or property list file",
                fileURL: url)
        }
        if checksTrust { try Self.checkTrust(status, url) }
        do {
            return try file.readAll(expectedSize: Int(status.size))
        } catch {
            throw DefaultsError(error, "cannot read the layer file", fileURL: url)
        }
    }

    /// Throws unless the file is owned by root or this process's user and not writable by group or others.
    static func checkTrust(_ status: FileStatus, _ url: URL) throws(DefaultsError) {
        let user = getuid()
        if status.owner != 0 && status.owner != user {
            throw DefaultsError(
                .untrustedFile,
                message: "ignored: the file is owned by user \(status.owner); expected root or this process's user "
                    + "(\(user))", fileURL: url)
        }
        if status.permissions & 0o022 != 0 {
            throw DefaultsError(
                .untrustedFile,
                message: "ignored: the file is writable by "
                    + (status.permissions & 0o002 != 0 ? "others" : "its group")
                    + " (mode \(String(status.permissions, radix: 8))); expected no write permission beyond its owner",
                fileURL: url)
        }
    }
}
