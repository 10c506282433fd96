/// Where a save writes its temporary file before renaming it over the suite: a hidden subdirectory of the
/// suite's directory, `.observable-defaults/`, when it is ours; beside the suite otherwise.
///
/// inotify is not recursive, so creating, writing and closing a file in the subdirectory makes no event
/// that watchers of the suite's directory (every process observing a suite there, our own among them)
/// are woken by: a save reaches them as its one `rename`. A temporary file beside the suite wakes them
/// for its `CREATE`, `MODIFY` and `CLOSE_WRITE` too (see `Docs/benchmarks.md`, issue 12 row 2).
///
/// The subdirectory is used only when it is safe and certain to work, else the save writes beside the suite:
/// - the suite's directory is ours (a save as root into a user's directory does not leave a directory
///   of root's there);
/// - it is a real directory (not a symlink) owned by us with no access for group or others, so nobody
///   else can put or remove files in it; in a sticky directory others can write, nobody else can replace it;
/// - it is on the suite directory's device (a mount on it would make the rename fail with `EXDEV`);
/// - it is created on demand with mode 0700, so a directory removed and created again gets a new one;
///   a suite directory where it cannot be created (read-only, full) writes beside the suite.
///
/// It stays after the save (creating it per save would cost two more events); ``StaleTemporaryFiles``
/// cleans up after killed writers in it as beside the suite.
enum SuiteFileTemporaryDirectory {
    /// The subdirectory's name: hidden, and not a suite name (those end in `.json` or `.plist`).
    static let name = ".observable-defaults"

    /// The path of the subdirectory of `directory`.
    static func path(in directory: String) -> String {
        (directory == "/" ? "" : directory) + "/" + name
    }

    /// The directory to create the temporary file of a save in: the subdirectory of `directory` when it
    /// passes the rules above (created if it is absent), `directory` otherwise. `directoryStatus` is the
    /// `stat` of `directory` (taken by ``SuiteDirectoryPolicy/check(directory:fileURL:)``).
    static func forSave(in directory: String, directoryStatus: FileStatus) -> String {
        guard directoryStatus.owner == CurrentProcess.effectiveUser else { return directory }
        let subdirectory = path(in: directory)
        let device = directoryStatus.node.device
        do throws(SystemCallError) {
            // Something is there: it decides (no `mkdir` per save for a name that is not ours).
            return isUsable(try FileStatus(linkAt: subdirectory), device: device) ? subdirectory : directory
        } catch {
            guard error.errno == .noSuchFile else { return directory }
        }
        // Absent: create it. Created by another writer meanwhile, `mkdir` fails and the check decides.
        do throws(SystemCallError) {
            try FileSystem.makeDirectory(subdirectory, permissions: 0o700)
        } catch {
            if error.errno != .exists { return directory }
        }
        return (try? FileStatus(linkAt: subdirectory)).map { isUsable($0, device: device) } == true
            ? subdirectory : directory
    }

    /// Whether `status` (an `lstat`) is a directory of ours, private to us, on `device`.
    private static func isUsable(_ status: FileStatus, device: UInt64) -> Bool {
        isOwnPrivateDirectory(status) && status.node.device == device
    }

    /// The subdirectory of `directory` when it is a directory of ours, private to us (a symlink someone
    /// else planted there is not followed).
    static func existing(in directory: String) -> String? {
        let subdirectory = path(in: directory)
        guard let status = try? FileStatus(linkAt: subdirectory), isOwnPrivateDirectory(status) else { return nil }
        return subdirectory
    }

    private static func isOwnPrivateDirectory(_ status: FileStatus) -> Bool {
        status.kind == .directory && status.owner == CurrentProcess.effectiveUser && status.permissions & 0o7077 == 0
    }
}
