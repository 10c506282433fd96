import Foundation

/// How the processes that run one store (the same endpoints and namespace, or the local-only store, in one
/// state directory: two daemons of one user, a daemon and a tool) share its local copy without losing each
/// other's writes.
///
/// Each process writes a copy of its own, so no process's whole save ever replaces another's unsent writes:
/// the first to start takes the copy's own name (``fileURL``, the *primary*), holding an exclusive `flock`
/// on `<name>.lock` while it runs; any other writes `<name>.p<pid>-<random>` (a *secondary*) under its own
/// `<that>.lock`. A copy whose lock nobody holds belongs to a process that has ended.
///
/// Loading reads this process's copy, then every other one of the store:
/// - a copy whose process has ended is *adopted*: its unsent writes become this store's, to be uploaded,
///   and its files are removed after this process's next whole save holds them (its lock is kept until
///   then, so no other process adopts it too);
/// - a live process's copy lends what it knows of the server (newer revisions) and its local-only
///   writes, but its unsent writes are left to it.
///
/// The writes of one key made by several processes are ordered by when they were made
/// (``CloudState/writeTimes``), and merged by ``CloudState/takeIn(sibling:adoptingWrites:)``. A running
/// store adopts copies of processes that ended meanwhile whenever its cluster comes back
/// (``adoptOrphans(onProblem:)``).
final class CloudLocalCopyShare: Sendable {
    /// The copy this process writes: the primary, or this process's secondary.
    let own: CloudLocalCopy
    /// The primary copy's name (``CloudKeyValueStore/localCopyURL``).
    let fileURL: URL
    /// The lock that marks ``own`` as this process's.
    private let ownLock: Locked<OwnLock>

    private enum OwnLock {
        case held(CopyLock)
        /// A secondary's lock that could not be taken at start (no descriptor left): taken before anything
        /// is written, so the copy is never where other processes would not look for it.
        case pending
        /// The primary's lock file cannot be used for a reason that lasts (no permission in the directory):
        /// the copy is used without it, as by a process alone, and its own reads and writes say what fails.
        case unavailable
    }
    /// Copies of ended processes taken in and not removed yet, with the locks that keep them ours.
    private let adopted = Locked<[(copy: URL, lock: CopyLock)]>([])

    /// Claims the primary at `fileURL` if no running process holds it, else a secondary beside it.
    init(fileURL: URL) {
        self.fileURL = fileURL
        let directory = fileURL.deletingLastPathComponent()
        switch CopyLock.take(Self.lockPath(of: fileURL), creatingDirectory: directory) {
        case .taken(let lock):
            own = CloudLocalCopy(fileURL: fileURL)
            ownLock = Locked(.held(lock))
            return
        case .failed(let error) where !error.isTransient:
            own = CloudLocalCopy(fileURL: fileURL)
            ownLock = Locked(.unavailable)
            return
        case .held, .failed:
            break
        }
        let tag = "p\(getpid())-\(String(UInt32.random(in: 0 ... .max), radix: 16))"
        own = CloudLocalCopy(fileURL: directory.appendingPathComponent(fileURL.lastPathComponent + "." + tag))
        if case .taken(let lock) = CopyLock.take(Self.lockPath(of: own.fileURL), creatingDirectory: directory) {
            ownLock = Locked(.held(lock))
        } else {
            ownLock = Locked(.pending)
        }
    }

    /// Whether this process writes the primary copy.
    var isPrimary: Bool { own.fileURL == fileURL }

    private static func lockPath(of copy: URL) -> String { copy.path + ".lock" }

    /// Takes the lock of this process's secondary when it could not be taken at start; throws while it
    /// cannot, so nothing is written where no other process would look for it.
    private func claimOwnCopy() throws(DefaultsError) {
        try ownLock.withLock { (lock: inout OwnLock) throws(DefaultsError) in
            guard case .pending = lock else { return }
            switch CopyLock.take(Self.lockPath(of: own.fileURL), creatingDirectory: fileURL.deletingLastPathComponent())
            {
            case .taken(let taken): lock = .held(taken)
            case .held:
                throw DefaultsError(
                    .fileSystem, message: "another process holds the lock of this process's own local copy",
                    fileURL: own.fileURL)
            case .failed(let error): throw error
            }
        }
    }

    // MARK: Loading

    /// Reads this process's copy (see ``CloudLocalCopy/load(onProblem:)``) and takes in every other copy
    /// of the store as the type's description says; `nil` when there is nothing at all. Throws what
    /// ``CloudLocalCopy/load(onProblem:)`` throws for this process's copy, unless another copy brought
    /// something (then that problem goes to `onProblem`).
    func load(onProblem: (DefaultsError) -> Void = { _ in }) throws(DefaultsError) -> CloudState? {
        var state: CloudState?
        var failure: DefaultsError?
        do { state = try own.load(onProblem: onProblem) } catch { failure = error }
        if own.awaitsLoad, let failure { throw failure }
        let copies = otherCopies()
        let siblings =
            adoptOrphans(among: copies, onProblem: onProblem).map { ($0, true) }
            + liveSiblings(among: copies).map { ($0, false) }
        if !siblings.isEmpty {
            var merged = state ?? CloudState()
            for (copy, adopting) in siblings {
                let outcome = merged.takeIn(sibling: copy, adoptingWrites: adopting)
                for key in outcome.dropped { onProblem(Self.droppedError(key)) }
            }
            state = merged
        }
        if let failure {
            guard state != nil else { throw failure }
            onProblem(failure)
        }
        return state
    }

    /// The error for an unsent write of an ended process's copy of another account.
    static func droppedError(_ key: String) -> DefaultsError {
        DefaultsError(
            .cloud,
            message:
                "the unsent write was dropped: the local copy of an ended process that held it came from another account (cluster, namespace or user) than this store's",
            key: key)
    }

    /// The states of the copies of ended processes not taken in yet, each locked and noted for removal
    /// after the next whole save. A copy that cannot be read now is left for a later call.
    func adoptOrphans(onProblem: (DefaultsError) -> Void) -> [CloudState] {
        adoptOrphans(among: otherCopies(), onProblem: onProblem)
    }

    /// ``adoptOrphans(onProblem:)`` among `copies` (``otherCopies()``, listed once per load).
    private func adoptOrphans(among copies: [URL], onProblem: (DefaultsError) -> Void) -> [CloudState] {
        var states: [CloudState] = []
        for copy in copies where !adopted.withLock({ $0.contains { $0.copy == copy } }) {
            // A primary without a lock file was written by a version that had none, or never locked: nobody
            // holds it. A secondary's lock file comes first and goes last: without it, the copy is gone.
            let creating = copy == fileURL ? copy.deletingLastPathComponent() : nil
            guard case .taken(let lock) = CopyLock.take(Self.lockPath(of: copy), creatingDirectory: creating) else {
                continue
            }
            let reader = CloudLocalCopy(fileURL: copy)
            var state: CloudState?
            do { state = try reader.load(onProblem: onProblem) } catch { onProblem(error) }
            if reader.awaitsLoad { continue }  // the lock goes with `lock`: tried again later
            adopted.withLock { $0.append((copy, lock)) }
            if let state { states.append(state) }
        }
        return states
    }

    /// What the copies of the running processes hold now, read without changing them.
    private func liveSiblings(among copies: [URL]) -> [CloudState] {
        let taken = Set(adopted.withLock { $0.map(\.copy) })
        return copies.filter { !taken.contains($0) }.compactMap { CloudLocalCopy(fileURL: $0).currentState() }
    }

    /// What a process starting now would load from the copies at `fileURL` if every process that wrote
    /// them had ended, without taking, moving or changing anything (``CloudLocalCopy/currentState()`` of each,
    /// merged as a load merges them).
    static func currentState(at fileURL: URL) -> CloudState? {
        let share = CloudLocalCopyShare(reading: fileURL)
        let copies = [fileURL] + share.otherCopies()
        let states = copies.compactMap { CloudLocalCopy(fileURL: $0).currentState() }
        guard var merged = states.first else { return nil }
        for state in states.dropFirst() { _ = merged.takeIn(sibling: state, adoptingWrites: true) }
        return merged
    }

    /// A share that only finds the copies at `fileURL` (its own copy is the primary, not claimed).
    private init(reading fileURL: URL) {
        self.fileURL = fileURL
        own = CloudLocalCopy(fileURL: fileURL)
        ownLock = Locked(.unavailable)
    }

    /// Every copy of the store but this process's: the primary (when this process writes a secondary)
    /// and each secondary, found by its lock file.
    private func otherCopies() -> [URL] {
        let directory = fileURL.deletingLastPathComponent()
        let prefix = fileURL.lastPathComponent + ".p"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var copies = names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".lock") }.map {
            directory.appendingPathComponent(String($0.dropLast(".lock".count)))
        }
        if !isPrimary { copies.append(fileURL) }
        return copies.filter { $0 != own.fileURL }
    }

    // MARK: Writing

    /// Writes a whole save to this process's copy (``CloudLocalCopy/save(_:)``), then removes the adopted
    /// copies, whose unsent writes it holds now.
    func save(_ state: CloudState) throws(DefaultsError) {
        try claimOwnCopy()
        guard try own.save(state) else { return }
        let removable: [(copy: URL, lock: CopyLock)] = adopted.withLock { adopted in
            defer { adopted = [] }
            return adopted
        }
        for entry in removable {
            CloudLocalCopy(fileURL: entry.copy).removeFiles()
            try? FileSystem.removeFile(Self.lockPath(of: entry.copy))
        }
        withExtendedLifetime(removable) {}  // unlocked once their files are gone
    }

    /// Appends a record to this process's copy (``CloudLocalCopy/append(_:)``).
    func append(_ content: Data) throws(DefaultsError) -> Bool {
        try claimOwnCopy()
        return try own.append(content)
    }

    /// Ends writing (``CloudLocalCopy/stopWriting()``) and lets go of this process's copy and the adopted
    /// ones not removed yet: another store in this process, or the next process, may take them.
    func stopWriting() {
        own.stopWriting()
        ownLock.withLock { $0 = .unavailable }
        adopted.withLock { $0 = [] }
    }

    /// Whether copies of ended processes were taken in and wait for a whole save to be removed.
    var hasAdoptedCopies: Bool { adopted.withLock { !$0.isEmpty } }
}

/// An exclusive `flock` on a copy's lock file, held while the value lives.
final class CopyLock: Sendable {
    private let file: FileDescriptor

    private init(_ file: consuming FileDescriptor) { self.file = file }

    /// What taking a lock found.
    enum Outcome {
        case taken(CopyLock)
        /// Another open file (of a running process, or of another store in this one) holds it.
        case held
        /// The lock file could not be opened or locked (no descriptor left, no permission, missing, or its
        /// directory made anew by another user).
        case failed(DefaultsError)
    }

    /// Takes the lock at `path` without waiting, creating the file (mode 0600) when `creatingDirectory`
    /// is given (and that directory, as ``CloudStateDirectory`` makes and checks it, when missing); without
    /// it, a missing file is `failed`.
    static func take(_ path: String, creatingDirectory directory: URL?) -> Outcome {
        func open() throws(SystemCallError) -> FileDescriptor {
            try FileDescriptor(
                opening: path, directory == nil ? [.readWrite, .noFollow] : [.readWrite, .create, .noFollow],
                mode: 0o600)
        }
        func failed(_ error: SystemCallError) -> Outcome {
            .failed(
                DefaultsError(error, "cannot lock the cloud store's local copy", fileURL: URL(fileURLWithPath: path)))
        }
        let file: FileDescriptor
        do throws(SystemCallError) {
            file = try open()
        } catch {
            guard error.errno.isMissingPath, let directory else { return failed(error) }
            do throws(DefaultsError) {
                try CloudStateDirectory.recreate(directory, localCopy: URL(fileURLWithPath: path))
            } catch {
                return .failed(error)
            }
            do throws(SystemCallError) { file = try open() } catch { return failed(error) }
        }
        do throws(SystemCallError) {
            guard try file.tryLockExclusively() else { return .held }
        } catch {
            return failed(error)
        }
        return .taken(CopyLock(file))
    }
}
