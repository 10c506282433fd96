import Foundation

/// One file of a layer (a managed file, a system file, the global domain's file): where it may be, whether
/// its owner and mode must be checked, and reading it.
///
/// `NAME.json` is used when it exists, else `NAME.plist`. A file that does not exist gives no values; one
/// that cannot be used (it does not parse, it is not trusted, it cannot be read) throws an error naming it.
struct LayerFile: Sendable {
    /// Which layer the file belongs to: the origin of its values, and whether it must be trusted.
    enum Role: UInt8, Hashable, Sendable {
        case managed, system, global
    }

    /// What identifies a layer file in the process (its sources and its kept reads are shared by key).
    struct Key: Hashable, Sendable {
        var role: Role
        var directory: LayerDirectory
        /// The suite's name, without an extension.
        var name: String
    }

    let key: Key

    /// The layer file of suite `name` in `directory`.
    init(_ role: Role, name: String, directory: LayerDirectory) {
        key = Key(role: role, directory: directory, name: name)
    }

    /// The layer file of `key`.
    init(_ key: Key) { self.key = key }

    var directory: LayerDirectory { key.directory }

    /// The name of candidate `index`: `NAME.json` (0), then `NAME.plist` (1). Names and paths are made when
    /// asked for: a suite that opens finds most layer files absent or unchanged, and needs neither.
    func name(_ index: Int) -> String { key.name + (index == 0 ? ".json" : ".plist") }

    /// The paths of `NAME.json` and `NAME.plist` in the layer's directory, in the order they are tried (paths,
    /// not URLs: a URL made by appending a component asks the file system whether it is a directory).
    var candidates: [String] { [candidate(0), candidate(1)] }

    /// The path of candidate `index`.
    func candidate(_ index: Int) -> String {
        (key.directory.path == "/" ? "/" : key.directory.path + "/") + name(index)
    }

    /// Whether the file must be owned by root or this process's user and not writable by group or others
    /// (dconf's and sudo's rule for files an administrator owns).
    var checksTrust: Bool { key.role != .global }

    /// The file `NAME.json`, for messages.
    var mainURL: URL { URL(fileURLWithPath: candidate(0), isDirectory: false) }

    /// The origin of a value read from the file at `url`.
    func origin(_ url: URL) -> DefaultsOrigin {
        switch key.role {
        case .managed: .managed(url)
        case .system: .system(url)
        case .global: .global(url)
        }
    }

    /// The values of the first candidate that exists, or none. With `listings` (a suite opening, after
    /// ``LayerListings/catchUp()``), a candidate known absent is not opened, a read the listings hold for the
    /// candidates as they are now is taken instead of reading them again, and a directory not listed yet is.
    func read(listings: LayerListings? = nil) throws(DefaultsError) -> [ExactKey: LayerEntry] {
        guard let listings else { return try readCandidates(known: nil, listings: nil).get() }
        switch listings.lookUp(self) {
        case .read(let result):
            return try result.get()
        case .stamps(let stamps, let clock):
            if stamps.isEmpty { return [:] }
            let outcome = readCandidates(known: stamps, listings: listings)
            if outcome.isRepeatable { listings.remember(self, stamps, at: clock, outcome.result) }
            return try outcome.get()
        case .unknown:
            let outcome = readCandidates(known: nil, listings: listings)
            // The next suite to open finds the directory listed (or knows it missing).
            listings.list(around: candidate(0))
            return try outcome.get()
        }
    }

    /// What reading the candidates gave, and whether reading the same files again gives the same (so it
    /// may be kept while their directory's listing says they are unchanged).
    private struct Outcome {
        var result: Result<[ExactKey: LayerEntry], DefaultsError>
        var isRepeatable: Bool

        func get() throws(DefaultsError) -> [ExactKey: LayerEntry] { try result.get() }
    }

    /// Reads the first candidate that exists; `known`: which candidates the listings know absent.
    private func readCandidates(known: LayerListings.Stamps?, listings: LayerListings?) -> Outcome {
        for index in 0..<2 {
            if let known, known[index] == 0 { continue }
            if known == nil, let listings, listings.isAbsent(name(index), in: directory) { continue }
            let path = candidate(index)
            switch readBytes(path) {
            case .missing:
                continue
            case .failed(let error, let isRepeatable):
                return Outcome(result: .failure(error), isRepeatable: isRepeatable)
            case .read(let bytes, let isRepeatable):
                let url = URL(fileURLWithPath: path, isDirectory: false)
                let format: SuiteFormat = index == 0 ? .json : .propertyList
                do throws(DefaultsError) {
                    let values = try format.decode(bytes, fileURL: url)
                    let origin = origin(url)
                    return Outcome(
                        result: .success(values.mapValues { LayerEntry(value: $0, origin: origin) }),
                        isRepeatable: isRepeatable)
                } catch {
                    return Outcome(result: .failure(error), isRepeatable: isRepeatable)
                }
            }
        }
        return Outcome(result: .success([:]), isRepeatable: true)
    }

    /// What opening one candidate gave. `isRepeatable`: the same bytes or the same error come back while
    /// the file's directory has no event for its name; not so for a symlink (its target changes elsewhere),
    /// a file with other hard links (written through another directory), or a system call that failed.
    private enum Bytes {
        case missing
        case read(Data, isRepeatable: Bool)
        case failed(DefaultsError, isRepeatable: Bool)
    }

    /// The bytes of the file at `path`, after the trust check of the very file opened.
    private func readBytes(_ path: String) -> Bytes {
        let file: FileDescriptor
        var isSymlink = false
        do {
            file = try FileDescriptor(opening: path, [.readOnly, .noFollow])
        } catch {
            if error.errno.isMissingPath { return .missing }
            guard error.errno == .symlinkLoop else {
                return Self.failure(error, "cannot open the layer file for reading", path)
            }
            isSymlink = true
            do {
                file = try FileDescriptor(opening: path, .readOnly)
            } catch {
                if error.errno.isMissingPath { return .missing }
                return Self.failure(error, "cannot open the layer file for reading", path)
            }
        }
        let status: FileStatus
        do {
            status = try file.status()
        } catch {
            return Self.failure(error, "cannot stat the layer file", path)
        }
        let url = URL(fileURLWithPath: path, isDirectory: false)
        let isRepeatable = !isSymlink && status.linkCount == 1
        guard status.kind == .regular else {
            let error = DefaultsError(
                .fileSystem, message: "the layer file is not a regular file; expected a JSON or property list file",
                fileURL: url)
            return .failed(error, isRepeatable: isRepeatable)
        }
        if checksTrust {
            do throws(DefaultsError) {
                try Self.checkTrust(status, url)
            } catch {
                return .failed(error, isRepeatable: isRepeatable)
            }
        }
        do {
            return .read(try file.readAll(expectedSize: Int(status.size)), isRepeatable: isRepeatable)
        } catch {
            return Self.failure(error, "cannot read the layer file", path)
        }
    }

    private static func failure(_ error: SystemCallError, _ message: String, _ path: String) -> Bytes {
        .failed(
            DefaultsError(error, message, fileURL: URL(fileURLWithPath: path, isDirectory: false)), isRepeatable: false)
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
