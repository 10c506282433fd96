import Foundation

/// One `update(forKey:_:)` of a key that waits for upload (made offline, or in a batch): at upload it runs
/// again on the server's value when another machine changed the key meanwhile, so no update is lost while
/// the process lives.
struct CloudUpdateStep: Sendable {
    /// Increasing in the store: tells the steps an upload carried from later ones.
    let id: Int
    /// The update's transform, checked: it returns a value in the store's form, or throws to leave the value
    /// as it is (an object's transform that threw, a value JSON cannot hold).
    let transform: @Sendable (DefaultsValue?) throws -> DefaultsValue?

    /// Runs `steps` in order on `start`; a step that throws leaves the value as it is and goes to `failed`.
    static func run(_ steps: [CloudUpdateStep], on start: DefaultsValue?, failed: (any Error) -> Void = { _ in })
        -> DefaultsValue?
    {
        var value = start
        for step in steps {
            do { value = try step.transform(value) } catch { failed(error) }
        }
        return value
    }
}

/// Update steps and batches in the state (see ``PendingWrite/steps`` and ``PendingWrite/batch``).
extension CloudState {
    /// The batch a write of `key` made now belongs to: the open batch (a batch of the key waiting for upload
    /// is merged into it), else the batch the key's pending write waits in (a newer write of a key joins its
    /// batch), else none.
    mutating func batchForWrite(of key: String) -> Int64? {
        let waiting = pending[key]?.batch
        guard let open = openBatch else { return waiting }
        if let waiting, waiting != open {
            // One write now holds both batches: they go up together.
            for (other, write) in pending where write.batch == waiting { pending[other]?.batch = open }
        }
        return open
    }

    /// Applies an update step made locally to `key`: memory holds `value` (with its JSON `text`), and a
    /// syncing store keeps the step with the key's pending write, to run again at upload. Returns whether
    /// memory changed.
    @discardableResult
    mutating func applyLocalStep(
        _ step: CloudUpdateStep, value: DefaultsValue?, text: Data?, forKey key: String, syncs: Bool
    ) -> Bool {
        let changed = setValue(value, forKey: key, text: text)
        guard syncs else {
            if changed { writeTimes[key] = CloudState.wallClockNow() }
            return changed
        }
        let batch = batchForWrite(of: key)
        var write =
            pending[key]
            ?? {
                var fresh = PendingWrite(
                    value: value, baseRevision: serverRevisions[key] ?? 0, generation: nextGeneration, text: text)
                fresh.chainStart = nil  // the steps run on the server's value
                return fresh
            }()
        write.value = value
        write.text = text ?? value.map(CloudValueText.encode)
        write.generation = nextGeneration
        write.batch = batch
        write.steps.append(step)
        write.madeByEndedUpdate = false
        nextGeneration += 1
        pending[key] = write
        writeTimes[key] = CloudState.wallClockNow()
        return true
    }

    /// What a confirmed upload left to do for its key.
    enum ChainConfirmation: Equatable {
        /// Done; whether memory changed (the value uploaded was worked out again on the server's value).
        case done(changed: Bool)
        /// A newer pending write made of update steps on the confirmed value: its value is to be worked out
        /// again on it (``recompute(_:forKey:on:)``).
        case recompute
    }

    /// This store's upload of `write` for `key` (update steps, or part of a batch) was written at `revision`
    /// with the value `uploaded` (``PendingWrite/value``, or that worked out again on the server's value):
    /// memory follows, unless a newer local write is pending; a newer pending write loses the steps the
    /// upload carried, and when it consists of later steps on the same value, it is to be worked out again.
    mutating func confirmChain(
        _ write: PendingWrite, uploaded: DefaultsValue?, text: Data?, forKey key: String, revision: Int64
    ) -> ChainConfirmation {
        inFlight[key] = nil
        updateInFlight[key] = nil
        let newest = revision >= knownRevisions[key] ?? 0
        knownRevisions[key] = max(knownRevisions[key] ?? 0, revision)
        guard newest else {
            if pending[key]?.generation == write.generation { pending[key] = nil }
            return .done(changed: false)
        }
        serverRevisions[key] = uploaded == nil ? nil : revision
        guard var newer = pending[key], newer.generation != write.generation else {
            pending[key] = nil
            let changed = setValue(uploaded, forKey: key, text: text)
            if changed { writeTimes[key] = nil }
            return .done(changed: changed)
        }
        newer.baseRevision = uploaded == nil ? 0 : revision
        newer.steps.removeAll { $0.id <= write.lastStep }
        let extendsUpload = newer.chainStart.map { $0 <= write.generation } ?? true
        guard extendsUpload else {
            pending[key] = newer  // a plain write made after the upload began: it goes up next, as it is
            return .done(changed: false)
        }
        newer.chainStart = nil
        pending[key] = newer
        guard newer.hasSteps else {
            // Nothing of it is newer than the upload.
            pending[key] = nil
            return .done(changed: setValue(uploaded, forKey: key, text: text))
        }
        return .recompute
    }

    /// Stores `value`, worked out for the pending write of `key` numbered `generation` (its steps run again
    /// on a confirmed value), unless a newer write came meanwhile; returns whether memory changed, or `nil`
    /// when the pending write changed (work it out again).
    mutating func recompute(_ generation: Int, forKey key: String, to value: DefaultsValue?) -> Bool? {
        guard var write = pending[key], write.generation == generation else { return pending[key] == nil ? false : nil }
        let text = value.map(CloudValueText.encode)
        write.value = value
        write.text = text
        pending[key] = write
        return setValue(value, forKey: key, text: text)
    }

    /// Takes the server's `value` of `key` at `revision` (its modification revision; for an absent key the
    /// revision it was read at) as memory's, over this store's own write of it: a batch that lost to
    /// another machine's change. Returns whether memory changed.
    mutating func takeServerValue(_ value: DefaultsValue?, forKey key: String, revision: Int64, text: Data?) -> Bool {
        knownRevisions[key] = max(knownRevisions[key] ?? 0, revision)
        serverRevisions[key] = value == nil ? nil : revision
        writeTimes[key] = nil
        return setValue(value, forKey: key, text: text)
    }
}
