import Foundation
import Synchronization

/// The file operations behind a suite file: reading a snapshot and replacing it atomically. Writers hold
/// the suite's ``SuiteLock`` around a replacement.
enum SuiteFileIO {
    /// The bytes of a file together with the identity of exactly the version read.
    struct Snapshot {
        var bytes: Data
        var identity: FileIdentity
    }

    /// Reads the whole file, or returns `nil` when it does not exist.
    static func readSnapshot(_ url: URL) throws(DefaultsError) -> Snapshot? {
        let path = url.path
        let file: FileDescriptor
        do {
            file = try FileDescriptor(opening: path, .readOnly)
        } catch {
            if error.errno.isMissingPath { return nil }
            throw DefaultsError(error, "cannot open the suite file for reading", fileURL: url)
        }
        let status: FileStatus
        do {
            status = try file.status()
        } catch {
            throw DefaultsError(error, "cannot stat the suite file", fileURL: url)
        }
        if status.kind == .directory {
            throw DefaultsError(
                .fileSystem, message: "the suite file is a directory; expected a JSON or property list file",
                fileURL: url, errorNumber: Errno.isDirectory.rawValue)
        }
        let bytes: Data
        do {
            bytes = try file.readAll(expectedSize: Int(status.size))
        } catch {
            throw DefaultsError(error, "cannot read the suite file", fileURL: url)
        }
        return Snapshot(bytes: bytes, identity: FileIdentity(status))
    }

    /// The sidecar paths a write of the suite file at `path` uses, after the checks that keep other users
    /// from steering the write (see ``SuiteDirectoryPolicy``): the suite's directory must not be writable
    /// by other users unless it is sticky, and a symlink at the suite path is followed only where the
    /// kernel's `protected_symlinks` rule would follow it.
    static func checkedWritePaths(for path: String, fileURL: URL) throws(DefaultsError) -> SidecarPaths {
        var linkPaths = SidecarPaths(file: path)
        let directory = try SuiteDirectoryPolicy.check(directory: linkPaths.directory, fileURL: fileURL)
        linkPaths.directoryStatus = directory
        guard let link = try? FileStatus(linkAt: path), link.kind == .symlink else { return linkPaths }
        try SuiteDirectoryPolicy.checkSymlink(link, at: path, in: directory, fileURL: fileURL)
        guard let target = try? FileSystem.resolvedPath(path) else { return linkPaths }
        var targetPaths = SidecarPaths(file: target)
        targetPaths.directoryStatus =
            targetPaths.directory == linkPaths.directory
            ? directory : try SuiteDirectoryPolicy.check(directory: targetPaths.directory, fileURL: fileURL)
        return targetPaths
    }

    /// The sidecar paths beside a suite file, made with string operations (no `URL` work per write).
    struct SidecarPaths {
        /// The suite file.
        var file: String
        /// Its directory.
        var directory: String
        /// Its last path component.
        var name: String
        /// The `stat` of ``directory`` taken by the write's policy check; `nil` when none was taken (the
        /// temporary file is then written beside the suite).
        var directoryStatus: FileStatus?

        init(file: String) {
            self.file = file
            if let slash = file.utf8.lastIndex(of: UInt8(ascii: "/")) {
                let directory = String(file[..<slash])
                self.directory = directory.isEmpty ? "/" : directory
                name = String(file[file.utf8.index(after: slash)...])
            } else {
                directory = "."
                name = file
            }
        }

        /// `.<name>.lock`, the `flock` every writer of the file takes.
        var lock: String { directory + "/." + name + ".lock" }

        var url: URL { URL(fileURLWithPath: file, isDirectory: false) }
    }

    /// What the longest sidecar name adds to the suite file's name: the temporary file
    /// `.<name>.<pid>.<n>.tmp`, with a pid of up to 7 digits (`pid_max` is at most 2^22) and a 32-bit `n`.
    static let longestSidecarOverhead = 1 + 1 + 7 + 1 + 10 + 4

    /// Distinguishes this process's temporary files: drawn at random once, then counted up (one
    /// `getrandom` per process instead of one per write).
    private static let temporaryCounter = Atomic<UInt32>(UInt32.random(in: 0 ... .max))

    /// A new temporary file name in `directory` (see ``SuiteFileTemporaryDirectory``), unique even among
    /// writers that run at the same time (the lock file may have been removed under them). A writer killed
    /// mid-write leaves it behind; ``StaleTemporaryFiles`` removes those.
    private static func temporaryPath(for paths: SidecarPaths, in directory: String) -> String {
        let unique = temporaryCounter.wrappingAdd(1, ordering: .relaxed).oldValue
        return directory + "/.\(paths.name).\(CurrentProcess.id).\(unique).tmp"
    }

    /// Creates the temporary file of a save: in the hidden subdirectory when it can be used, else (also
    /// when creating it there fails) beside the suite, whose error is the one reported. The descriptor's
    /// ``FileDescriptor/path`` is the temporary file's path.
    private static func createTemporaryFile(for paths: SidecarPaths) throws(DefaultsError) -> FileDescriptor {
        let options: FileDescriptor.Options = [.writeOnly, .create, .exclusive, .noFollow]
        if let status = paths.directoryStatus {
            let directory = SuiteFileTemporaryDirectory.forSave(in: paths.directory, directoryStatus: status)
            if directory != paths.directory {
                let path = temporaryPath(for: paths, in: directory)
                // Removed since it was checked, for instance: beside the suite still works.
                if let file = try? FileDescriptor(opening: path, options, mode: 0o600) { return file }
            }
        }
        let path = temporaryPath(for: paths, in: paths.directory)
        do {
            return try FileDescriptor(opening: path, options, mode: 0o600)
        } catch {
            throw DefaultsError(
                error, "cannot create the temporary file \(path) to write the suite", fileURL: paths.url)
        }
    }

    /// Replaces the file with `bytes` atomically: a temporary file in the same directory (in its hidden
    /// subdirectory when possible, see ``SuiteFileTemporaryDirectory``), then `rename`.
    /// Must be called holding the suite's ``SuiteLock``; the rename itself is committed under the
    /// directory's lock (see ``SuiteLock/withCommitLock(directory:fileURL:waitLimit:_:)``).
    ///
    /// A new file is created with exactly 0600 whatever the umask (0644 in the managed or a system layer's
    /// directory, which every user's programs read: see ``newFilePermissions(in:)``); an existing file keeps its permission
    /// bits and, where we may set them (as root, or a group we are in), its owner and group. An existing
    /// file without write permission is not replaced: the write fails with `EACCES`, as in an editor (also
    /// for root, who would otherwise bypass the bits). With `synchronize`, the file and its directory are
    /// fsync'ed so the change survives power loss. `existing` is the version of the file the new contents
    /// were made from, `nil` when there was no file: the commit replaces exactly that, or throws
    /// ``changedUnderneath`` (never stat the path again here: a file another writer created meanwhile
    /// would pass the check and be overwritten without its keys).
    /// - Returns: the identity of the new file.
    @discardableResult
    ///
    /// `willRename` gets the identity of the new file just before the rename, change time aside (the
    /// rename changes it): see ``SuiteFile/KnownVersions/adopting``.
    static func replace<Bytes: ContiguousBytes>(
        _ paths: SidecarPaths, with bytes: Bytes, existing: FileStatus?, synchronize: Bool, lockWaitLimit: Duration,
        willRename: (FileIdentity) -> Void = { _ in }
    ) throws(DefaultsError) -> FileIdentity {
        if let existing {
            try checkReplaceable(existing, paths)
        }
        let permissions = existing?.permissions ?? newFilePermissions(in: paths.directory)
        let file = try createTemporaryFile(for: paths)
        let temporaryPath = file.path
        var succeeded = false
        defer {
            if !succeeded { try? FileSystem.removeFile(temporaryPath) }
        }
        // Watchers of the directory (our own among them) are woken by every event of a save; a write that
        // is not needed, and a close after the rename (IN_CLOSE_WRITE on the suite's own name, which makes
        // every watcher check the suite a second time), are avoided. The identity is taken after the rename
        // through a read-only descriptor, whose close is not a watched event.
        // Opened while the file is still ours with mode 0600, so any mode set below cannot refuse it.
        let afterRename: FileDescriptor
        do {
            afterRename = try FileDescriptor(opening: temporaryPath, [.readOnly, .noFollow])
        } catch {
            throw DefaultsError(
                error, "cannot open the temporary file \(temporaryPath) again to read its identity", fileURL: paths.url)
        }
        let written: FileStatus
        do throws(SystemCallError) {
            try file.writeAll(bytes)
            if let existing,
                existing.owner != CurrentProcess.effectiveUser || existing.group != CurrentProcess.effectiveGroup
            {
                // Fails harmlessly (EPERM) when we may not give the file away; it is then ours.
                try? file.setOwner(existing.owner, group: existing.group)
            }
            // After `fchown`, which clears set-id bits; explicit, so the umask cannot narrow the mode. Skipped
            // when the mode is already right (the usual case), which saves watchers an IN_ATTRIB.
            written = try file.status()
            if written.permissions != permissions {
                try file.setPermissions(permissions)
            }
            if synchronize { try file.synchronize() }
        } catch {
            throw DefaultsError(error, writeFailureMessage(error.call, temporaryPath), fileURL: paths.url)
        }
        file.close()
        // Only the lock holder writes, but someone may remove or replace the lock file while we hold
        // it; a writer that locked the new one may have replaced the file since we read it, and our
        // contents would drop its changes. Then the caller reads the file again and starts over.
        try SuiteLock.withCommitLock(directory: paths.directory, fileURL: paths.url, waitLimit: lockWaitLimit) {
            () throws(DefaultsError) in
            if FileIdentity.of(path: paths.file) != existing.map(FileIdentity.init) {
                throw changedUnderneath
            }
            willRename(FileIdentity(written))
            do throws(SystemCallError) {
                try FileSystem.rename(temporaryPath, to: paths.file)
            } catch {
                throw DefaultsError(error, "cannot replace the suite file", fileURL: paths.url)
            }
        }
        succeeded = true
        do throws(SystemCallError) {
            // Taken after the rename, which changes the file's ctime, so the identity matches what a later
            // stat of the path sees and our own write is recognised without re-reading it.
            let identity = try FileIdentity(afterRename.status())
            if synchronize { try FileSystem.synchronizeDirectory(paths.directory) }
            return identity
        } catch {
            throw DefaultsError(
                error,
                error.call == "fstat"
                    ? "cannot stat the written suite file" : "cannot flush the suite's directory to disk",
                fileURL: paths.url)
        }
    }

    /// What a failed step of writing the temporary file was doing.
    private static func writeFailureMessage(_ call: String, _ temporaryPath: String) -> String {
        switch call {
        case "fchmod": "cannot set the permissions of the temporary file \(temporaryPath)"
        case "fsync": "cannot flush the suite file to disk"
        default: "cannot write the suite file"
        }
    }

    /// The permission bits of a new suite file in `directory`: 0600, private to the user, except in the
    /// managed or a system layer's directory (`defaults write --system` and `--managed`), whose files every
    /// user's programs read: 0644, which the layers' trust rule (no write beyond the owner) accepts.
    static func newFilePermissions(in directory: String) -> UInt32 {
        LayerPlaces.isSharedLayerDirectory(directory) ? 0o644 : 0o600
    }

    /// Thrown by ``replace(_:with:existing:synchronize:lockWaitLimit:willRename:)`` when the file is no longer the
    /// version the new contents were made from; the write starts over.
    static let changedUnderneath = DefaultsError(
        .fileSystem, message: "the suite file changed while it was being written", errorNumber: Errno.tryAgain.rawValue)

    /// Throws unless the existing file may be replaced: not a directory, and writable. The mode bits are
    /// checked explicitly because root's access checks ignore them.
    private static func checkReplaceable(_ existing: FileStatus, _ paths: SidecarPaths) throws(DefaultsError) {
        if existing.kind == .directory {
            throw DefaultsError(
                .fileSystem, message: "the suite file is a directory; cannot replace it", fileURL: paths.url,
                errorNumber: Errno.isDirectory.rawValue)
        }
        let writable = CurrentProcess.isRoot ? existing.hasWriteBit : FileSystem.isWritable(paths.file)
        if !writable {
            let mode = String(existing.permissions, radix: 8)
            throw DefaultsError(
                .fileSystem, message: "the suite file is read-only (mode \(mode)); refusing to replace it",
                fileURL: paths.url, errorNumber: Errno.accessDenied.rawValue)
        }
    }
}
