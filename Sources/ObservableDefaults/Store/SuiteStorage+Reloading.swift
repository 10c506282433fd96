import Foundation
import Synchronization

/// Re-reading a suite's file after an outside change and announcing the keys that differ.
extension SuiteStorage {
    /// Decides, once the file has been read, whether what was read may be applied (the file watcher's
    /// check that no writer was still busy with the file). `suspect` is true when the file was absent,
    /// empty or did not parse: states a save in progress passes through. Returning `false` drops the read
    /// without changing anything; whoever refused it reads again later.
    typealias ReadGate = (_ suspect: Bool) -> Bool

    /// Re-reads the file if it changed since this process last read or wrote it, and announces the keys
    /// whose value differs as outside changes. Pending changes kept while the file was broken are written
    /// once it parses again.
    func reloadFromDisk(gate: ReadGate? = nil) {
        // The event for our own write (or a touch that changed nothing) ends here, without waiting for
        // `fileAccess`, which the next write may be holding: the identity is published together with the
        // contents, so an equal one means memory already has this version.
        if isKnownVersion(FileIdentity.of(path: fileURL.path)) { return }
        switch fileAccess.withLock({ readChangedFile(gate: gate) }) {
        case .unchanged:
            return
        case .broken(let error, let identity):
            if let gate, !gate(true) { return }
            if recordBrokenFile(error, identity: identity) { publish(error) }
        case .unreadable(let error):
            report(error)
        case .loaded(let changed, let observers, let mustWritePending, let released):
            if !changed.isEmpty { Self.notify(observers, keys: changed, origin: .outside) }
            // Freeing a large suite's entries takes a while; observers should not wait for it.
            withExtendedLifetime(released) {}
            if mustWritePending {
                persistReportingErrors()
                updateWatching()
            }
        }
    }

    /// What re-reading the file under `fileAccess` found; ``reloadFromDisk()`` acts on it after the lock.
    enum ReloadOutcome {
        /// Memory already holds this version of the file.
        case unchanged
        /// The file does not parse (to be recorded and reported once per version).
        case broken(DefaultsError, FileIdentity)
        /// The file could not be read at all.
        case unreadable(DefaultsError)
        /// Memory now holds the file: the keys to announce, their observers, whether pending changes kept
        /// while the file was broken must be written, and entries to release after notifying.
        case loaded(Set<ExactKey>, [Observer], mustWritePending: Bool, released: [Entry]?)
    }

    /// The body of ``reloadFromDisk()``, run holding `fileAccess`: reads the file if it is not the known
    /// version, incrementally when possible (see ``SuiteFormat/reread(previous:previousMembers:entries:values:spellings:current:)``),
    /// else with a full parse and diff.
    /// `gate` sees every read before anything is applied (a file that does not parse: see
    /// ``reloadFromDisk(gate:)``).
    private func readChangedFile(gate: ReadGate?) -> ReloadOutcome {
        if isKnownVersion(FileIdentity.of(path: fileURL.path)) { return .unchanged }
        var contents: [ExactKey: DefaultsValue]
        let identity: FileIdentity?
        var bytes: [UInt8]?
        var spellings = JSONNumberSpellings()
        do {
            let read = try SuiteFileIO.readSnapshot(fileURL)
            if let gate, !gate(read.map { Self.isBlank($0.bytes) } ?? true) { return .unchanged }
            if let snapshot = read {
                let newBytes = [UInt8](snapshot.bytes)
                if let (changed, observers, mustWritePending, released) = rereadIncrementally(newBytes, identity: snapshot.identity) {
                    return .loaded(changed, observers, mustWritePending: mustWritePending, released: released)
                }
                bytes = newBytes
                do {
                    contents = try format.decode(snapshot.bytes, fileURL: fileURL, spellings: &spellings)
                } catch {
                    return .broken(error, snapshot.identity)
                }
                identity = snapshot.identity
            } else {
                (contents, identity) = ([:], nil)
            }
        } catch {
            return .unreadable(error)
        }
        let (changed, observers, mustWritePending) = state.withLock { state -> (Set<ExactKey>, [Observer], Bool) in
            var merged = contents
            for (key, value) in state.pending { merged[key] = value }
            let changed = Self.changedKeys(from: state.values, to: merged)
            let wasBroken = state.fileError != nil
            state.values = merged
            state.adoptFileVersion(
                values: &contents, entries: nil, bytes: bytes, members: nil, spellings: spellings, identity: identity)
            return (changed, changed.isEmpty ? [] : Array(state.observers.values), wasBroken && !state.pending.isEmpty)
        }
        return .loaded(changed, observers, mustWritePending: mustWritePending, released: nil)
    }

    /// The re-read that parses only the members whose bytes differ from those of the bytes last read or
    /// written (see ``SuiteIndex``), run holding `fileAccess`. Returns what ``reloadFromDisk()``
    /// announces, or `nil` (nothing changed in the state) when the full parse must decide: no previous
    /// bytes, a file that does not scan, a changed member that does not parse, duplicate keys or `null`.
    /// The sorted entries a write kept are handed back to be released once observers have heard (their
    /// fragments point into the previous bytes, so they are not kept).
    func rereadIncrementally(_ bytes: [UInt8], identity: FileIdentity) -> (Set<ExactKey>, [Observer], Bool, [Entry]?)? {
        // Moved out of the state and back, like the write does: only code holding `fileAccess` uses them.
        var contents: [ExactKey: DefaultsValue] = [:]
        var entries: [Entry]?
        let (previousBytes, knownMembers, knownSpellings) = state.withLock { state in
            swap(&contents, &state.fileValues)
            swap(&entries, &state.fileEntries)
            return (state.fileBytes, state.fileMembers, state.numberSpellings)
        }
        var spellings = knownSpellings
        let outcome = previousBytes?.withUnsafeBufferPointer { previous in
            bytes.withUnsafeBufferPointer { current in
                format.reread(
                    previous: previous, previousMembers: knownMembers, entries: entries, values: &contents,
                    spellings: &spellings, current: current)
            }
        }
        guard let outcome else {
            state.withLock {
                swap(&$0.fileValues, &contents)
                swap(&$0.fileEntries, &entries)
            }
            return nil
        }
        let (changed, observers, mustWritePending) = state.withLock { state -> (Set<ExactKey>, [Observer], Bool) in
            // Memory is the file with the pending changes on top, so only keys whose file value changed
            // can differ from it now.
            var changed = Set<ExactKey>()
            for key in outcome.changed {
                let merged = if let pending = state.pending[key] { pending } else { contents[key] }
                if state.values[key] != merged {
                    state.values[key] = merged
                    changed.insert(key)
                }
            }
            let wasBroken = state.fileError != nil
            state.adoptFileVersion(
                values: &contents, entries: nil, bytes: bytes, members: outcome.members, spellings: spellings,
                identity: identity)
            return (changed, changed.isEmpty ? [] : Array(state.observers.values), wasBroken && !state.pending.isEmpty)
        }
        return (changed, observers, mustWritePending, entries)
    }

    /// Whether the file holds nothing but whitespace (an empty suite, or the first moment of a save).
    static func isBlank(_ bytes: Data) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    }

    /// Whether `identity` is the version of the file memory holds, or the broken one already reported.
    func isKnownVersion(_ identity: FileIdentity?) -> Bool {
        let (known, broken) = state.withLock { ($0.fileIdentity, $0.brokenIdentity) }
        return identity == known || (identity != nil && identity == broken)
    }

    static func changedKeys(from old: [ExactKey: DefaultsValue], to new: [ExactKey: DefaultsValue]) -> Set<ExactKey> {
        var changed = Set<ExactKey>()
        var common = 0
        for (key, value) in new {
            if let oldValue = old[key] {
                common += 1
                if oldValue != value { changed.insert(key) }
            } else {
                changed.insert(key)
            }
        }
        // Old keys missing from `new` exist only if fewer than all of them were found there.
        if common < old.count {
            for key in old.keys where new[key] == nil { changed.insert(key) }
        }
        return changed
    }
}
