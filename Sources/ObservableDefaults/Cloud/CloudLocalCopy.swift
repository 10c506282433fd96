import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The offline-first copy of a cloud store on disk: values, the revisions they came at, unsent writes and
/// the account, as a readable JSON file written with the suite codec (replaced atomically, mode 0600).
///
/// Format: `{"format": 1, "account": {...}, "revision": N, "values": {...}, "revisions": {key: N},
/// "pending": {key: {"base": N, "value": v}}}`, a removal pending as `{"base": N, "removed": true}`.
final class CloudLocalCopy: Sendable {
    let fileURL: URL
    /// Serialises writers; true once writing was stopped.
    private let stopped = Locked(false)
    /// How many times the copy was written (for tests of the saver's coalescing).
    let saveCount = Locked(0)

    init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// Reads the copy; `nil` when there is none yet. A copy that does not parse is moved aside (to
    /// `<name>.broken`) and reported, so it is neither lost nor overwritten.
    func load() throws(DefaultsError) -> CloudState? {
        guard let data = FileManager.default.contents(atPath: fileURL.path) else {
            if FileManager.default.fileExists(atPath: fileURL.path) {
                throw DefaultsError(.fileSystem, message: "the cloud store's local copy cannot be read", fileURL: fileURL, errorNumber: EACCES)
            }
            return nil
        }
        do {
            return try Self.decode(JSONReader.parseSuite(data, fileURL: fileURL).stringKeyed)
        } catch {
            let aside = fileURL.appendingPathExtension("broken")
            try? FileSystem.rename(fileURL.path, to: aside.path)
            var moved = error
            moved.message = "the cloud store's local copy is damaged (\(error.message)); it was moved to \(aside.path) and the store starts from the server"
            throw moved
        }
    }

    /// Ends writing: every later ``save(_:)`` does nothing. Waits for a save in progress, so when it
    /// returns the file and its directory are left alone (a sync thread that outlives its released store
    /// would otherwise write, and re-create the directory, after its owner removed it).
    func stopWriting() {
        stopped.withLock { $0 = true }
    }

    /// Writes `state` unless writing was stopped. Called by the store's ``CloudLocalCopySaver`` only, so
    /// saves never overlap and the newest state is written last.
    func save(_ state: CloudState) throws(DefaultsError) {
        try stopped.withLock { (stopped: inout Bool) throws(DefaultsError) in
            guard !stopped else { return }
            let directory = fileURL.deletingLastPathComponent()
            if !FileManager.default.fileExists(atPath: directory.path) {
                do {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                } catch {
                    throw DefaultsError(.fileSystem, message: "cannot create the cloud state directory: \(error.localizedDescription)", fileURL: directory)
                }
            }
            let bytes = JSONWriter.encodeSuite(Self.encode(state))
            let temporary = directory.appendingPathComponent(".\(fileURL.lastPathComponent).\(getpid()).tmp")
            do throws(SystemCallError) {
                do {
                    let file = try FileDescriptor(opening: temporary.path, [.writeOnly, .create, .truncate, .noFollow], mode: 0o600)
                    try file.writeAll(bytes)
                }
                try FileSystem.rename(temporary.path, to: fileURL.path)
            } catch {
                try? FileSystem.removeFile(temporary.path)
                throw DefaultsError(error, "cannot write the cloud store's local copy", fileURL: fileURL)
            }
            saveCount.withLock { $0 += 1 }
        }
    }

    static func encode(_ state: CloudState) -> [String: DefaultsValue] {
        var pending: [String: DefaultsValue] = [:]
        for (key, write) in state.pending {
            var entry: [String: DefaultsValue] = ["base": .integer(Int(write.baseRevision))]
            if let value = write.value { entry["value"] = value } else { entry["removed"] = .bool(true) }
            pending[key] = .dictionary(entry)
        }
        var result: [String: DefaultsValue] = [
            "format": .integer(1),
            "revision": .integer(Int(state.lastRevision)),
            "values": .dictionary(state.values),
            "revisions": .dictionary(state.serverRevisions.mapValues { .integer(Int($0)) }),
            "pending": .dictionary(pending),
        ]
        if let account = state.account {
            result["account"] = .dictionary([
                "cluster": .string(account.clusterID), "namespace": .string(account.namespace), "user": .string(account.user),
            ])
        }
        return result
    }

    static func decode(_ file: [String: DefaultsValue]) throws(DefaultsError) -> CloudState {
        func bad(_ what: String) -> DefaultsError { DefaultsError(.malformedFile, message: "expected \(what)") }
        guard case .integer(1)? = file["format"] else { throw bad("\"format\": 1") }
        guard case .integer(let revision)? = file["revision"] else { throw bad("\"revision\" as an integer") }
        guard case .dictionary(let values)? = file["values"] else { throw bad("\"values\" as an object") }
        guard case .dictionary(let revisions)? = file["revisions"] else { throw bad("\"revisions\" as an object") }
        guard case .dictionary(let pending)? = file["pending"] else { throw bad("\"pending\" as an object") }
        var state = CloudState()
        for (key, value) in values { state.setValue(value, forKey: key) }
        state.lastRevision = Int64(revision)
        for (key, value) in revisions {
            guard case .integer(let number) = value else { throw bad("an integer revision for \"\(key)\"") }
            state.serverRevisions[key] = Int64(number)
            state.knownRevisions[key] = Int64(number)
        }
        for (key, entry) in pending.sorted(by: { $0.key < $1.key }) {
            guard case .dictionary(let fields) = entry, case .integer(let base)? = fields["base"] else {
                throw bad("a pending write with \"base\" for \"\(key)\"")
            }
            state.pending[key] = PendingWrite(value: fields["value"], baseRevision: Int64(base), generation: state.nextGeneration)
            state.nextGeneration += 1
        }
        if case .dictionary(let account)? = file["account"] {
            guard case .string(let cluster)? = account["cluster"], case .string(let namespace)? = account["namespace"],
                case .string(let user)? = account["user"]
            else { throw bad("\"account\" with cluster, namespace and user strings") }
            state.account = CloudAccount(clusterID: cluster, namespace: namespace, user: user)
        }
        return state
    }
}
