import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where cloud stores keep their local copies, and whether a store may use the directory it finds there.
///
/// A store keeps its local copy in `<state>/cloud` (``resolve(_:)``). What is in that directory is loaded
/// and then uploaded with the store's own credentials, so only this process's user may be able to change
/// it (the rule ssh applies to `~/.ssh`, and the file half applies to suite directories):
///
/// - `cloud/` is a directory (not a symlink: `lstat`), owned by this process's effective user and not
///   writable by its group or others;
/// - the state directory holding it is owned by this user or root, and not writable by group or others
///   unless it is sticky (like `/tmp`, where others may neither rename nor remove what is ours);
/// - the directories above it are not checked (`/tmp`, a home directory): only these two are the store's.
///
/// Missing ones are created at the store's start, mode 0700 (``prepare(_:localCopy:)``), so no other user
/// can make them first. A store whose directory breaks the rule does not read or write its local copy
/// there: it keeps its values in memory only, like a copy that cannot be written (an etcd store still
/// syncs with the server), and says why on its error channel.
enum CloudStateDirectory {
    /// The explicit directory, else `$OBSERVABLE_DEFAULTS_STATE_DIRECTORY`, else
    /// `$XDG_STATE_HOME/observable-defaults`, else `~/.local/state/observable-defaults`; with `cloud/` under it.
    static func resolve(_ explicit: URL?) -> URL {
        (explicit ?? base(ProcessInfo.processInfo.environment)).appendingPathComponent("cloud", isDirectory: true)
    }

    /// The state directory `environment` names (without `cloud/`).
    static func base(_ environment: [String: String]) -> URL {
        let base: URL
        if let variable = environment["OBSERVABLE_DEFAULTS_STATE_DIRECTORY"], variable.hasPrefix("/") {
            base = URL(fileURLWithPath: variable, isDirectory: true)
        } else if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = URL(fileURLWithPath: state, isDirectory: true).appendingPathComponent("observable-defaults")
        } else {
            base = FileManager.default.homeDirectoryForCurrentUser
                .appendingPathComponent(".local/state/observable-defaults", isDirectory: true)
        }
        return base
    }

    /// The local copy's file for an endpoint set and namespace: readable prefix plus a stable hash, so a
    /// different cluster address or namespace never reads another's copy. `https` counts as `http`: the
    /// same members reached through TLS are the same cluster, so a store moved to TLS keeps its copy and
    /// its unsent writes (and names stay as they were before TLS existed).
    static func localCopyName(endpoints: [URL], namespace: String) -> String {
        let addresses = endpoints.map { endpoint in
            guard endpoint.scheme == "https", var parts = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)
            else { return endpoint.absoluteString }
            parts.scheme = "http"
            return parts.url?.absoluteString ?? endpoint.absoluteString
        }
        let identity = addresses.sorted().joined(separator: ",") + "\n" + namespace
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable across runs, unlike Hasher
        for byte in identity.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let readable = String(
            namespace.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }.prefix(60))
        return "etcd-\(readable)-\(String(hash, radix: 16)).json"
    }
}

extension CloudStateDirectory {
    /// Creates what is missing of `directory` (a store's `<state>/cloud`, and the directories above it),
    /// each with mode 0700, then throws unless the local copy `file` in it may be read and written there
    /// (see the type's rules). A directory that cannot be created or examined is not an error here: reading
    /// and writing the copy then fail and say why.
    static func prepare(_ directory: URL, localCopy file: URL) throws(DefaultsError) {
        create(directory.path)
        try check(directory, localCopy: file)
    }

    /// Makes `directory` again when it went missing while a store ran (removed by hand, a cleaner), as
    /// ``prepare(_:localCopy:)`` does at start, except that failing to create it is an error too: the caller
    /// was about to write there. Checks it afterwards: another user may have made it first.
    static func recreate(_ directory: URL, localCopy file: URL) throws(DefaultsError) {
        if let error = create(directory.path) {
            throw DefaultsError(error, "cannot create the cloud state directory \(directory.path)", fileURL: directory)
        }
        try check(directory, localCopy: file)
    }

    /// Creates `path` and every missing directory above it with mode 0700 (exactly: not narrowed or widened
    /// by the umask). One made by another process meanwhile is left as it is (``check(_:localCopy:)`` judges
    /// it); returns the failure that stopped it, if any.
    @discardableResult
    static func create(_ path: String) -> SystemCallError? {
        var missing: [String] = []
        var current = path
        while current != "/", !current.isEmpty, (try? FileStatus(linkAt: current)) == nil {
            missing.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        for directory in missing.reversed() {
            do throws(SystemCallError) {
                try FileSystem.makeDirectory(directory, permissions: 0o700)
            } catch  where error.errno == .exists {
                continue
            } catch {
                return error
            }
        }
        return nil
    }

    /// Throws unless the local copy `file` may be read and written in `directory` (a store's
    /// `<state>/cloud`); see the type's rules. The error names the directory, what was found and what is
    /// expected.
    static func check(_ directory: URL, localCopy file: URL) throws(DefaultsError) {
        let path = directory.path
        let user = CurrentProcess.effectiveUser
        func untrusted(_ found: String, fix: String) -> DefaultsError {
            DefaultsError(
                .fileSystem,
                message:
                    "\(found): the cloud store's local copy is not read or written there, and the store keeps its values in memory only; \(fix)",
                fileURL: file)
        }
        if let cloud = try? FileStatus(linkAt: path) {
            switch cloud.kind {
            case .symlink:
                throw untrusted(
                    "the cloud state directory \(path) is a symlink (to \(FileSystem.symlinkTarget(of: path))), not a directory",
                    fix:
                        "expected a directory of this process's user: remove the link (the store creates the directory, mode 700)"
                )
            case .directory where cloud.owner != user:
                throw untrusted(
                    "the cloud state directory \(path) is owned by uid \(cloud.owner), not by this process's user (uid \(user))",
                    fix:
                        "expected a directory of this user: remove it (the store creates it, mode 700), or chown \(user) \(path)"
                )
            case .directory where cloud.permissions & 0o022 != 0:
                throw untrusted(
                    "the cloud state directory \(path) is writable by \(writers(cloud)) (mode \(mode(cloud)))",
                    fix: "make it private: chmod 700 \(path)")
            default:
                break  // a directory of ours; anything else is no directory, and reading the copy in it says so
            }
        }
        let parent = directory.deletingLastPathComponent().path
        // Followed if a symlink: what matters is who may change the directory that holds `cloud/`.
        guard let state = try? FileStatus(path: parent), state.kind == .directory else { return }
        if state.owner != user && state.owner != 0 {
            throw untrusted(
                "the state directory \(parent) holding \(path) is owned by uid \(state.owner), neither this process's user (uid \(user)) nor root",
                fix:
                    "expected a directory of this user or root: chown \(user) \(parent), or choose another state directory"
            )
        }
        if state.permissions & 0o022 != 0 && !state.isSticky {
            throw untrusted(
                "the state directory \(parent) holding \(path) is writable by \(writers(state)) and not sticky (mode \(mode(state))), so they could replace \(path)",
                fix: "make it private: chmod 700 \(parent)")
        }
    }

    /// Who besides the owner may write a file with `status`.
    private static func writers(_ status: FileStatus) -> String {
        status.isWritableByOthers ? "other users" : "its group"
    }

    /// `status`'s permission bits as `chmod` takes them: `0777`, `1777`.
    private static func mode(_ status: FileStatus) -> String {
        let digits = String(status.permissions, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
