import Foundation

/// The JSON of the local copy (see ``CloudLocalCopy``): a whole save, and a pending write as saves and
/// journal records hold it.
extension CloudLocalCopy {
    /// A whole save of `state`.
    static func encode(_ state: CloudState) -> [String: DefaultsValue] {
        let pending = state.pending.mapValues(encode)
        var result: [String: DefaultsValue] = [
            "format": .integer(1),
            "revision": .integer(Int(state.lastRevision)),
            "values": .dictionary(state.values),
            "revisions": .dictionary(state.serverRevisions.mapValues { .integer(Int($0)) }),
            "pending": .dictionary(pending)
        ]
        if !state.writeTimes.isEmpty {
            result["written"] = .dictionary(state.writeTimes.mapValues { .integer(Int($0)) })
        }
        if let account = state.account {
            result["account"] = .dictionary([
                "cluster": .string(account.clusterID), "namespace": .string(account.namespace),
                "user": .string(account.user)
            ])
        }
        return result
    }

    /// A pending write as the copy holds it: `{"base": N, "value": v}`, a removal `{"base": N, "removed": true}`;
    /// with `"batch": B` when it goes up in one transaction with the other writes of batch `B`, and with
    /// `"update": true` when an update made it (its transform is not kept).
    static func encode(_ write: PendingWrite) -> DefaultsValue {
        var entry: [String: DefaultsValue] = ["base": .integer(Int(write.baseRevision))]
        if let value = write.value { entry["value"] = value } else { entry["removed"] = .bool(true) }
        if let batch = write.batch { entry["batch"] = .integer(Int(batch)) }
        if write.hasSteps || write.madeByEndedUpdate { entry["update"] = .bool(true) }
        return .dictionary(entry)
    }

    /// The pending write of `key` that ``encode(_:)-(PendingWrite)`` wrote, numbered `generation`.
    static func decodePending(_ entry: DefaultsValue, key: String, generation: Int) throws(DefaultsError)
        -> PendingWrite
    {
        guard case .dictionary(let fields) = entry, case .integer(let base)? = fields["base"] else {
            throw malformed("a pending write with \"base\" for \"\(key)\"")
        }
        var write = PendingWrite(value: fields["value"], baseRevision: Int64(base), generation: generation)
        if case .integer(let batch)? = fields["batch"] { write.batch = Int64(batch) }
        write.madeByEndedUpdate = fields["update"] == .bool(true)
        return write
    }

    /// The error for a copy (or record) whose JSON is not what this version writes.
    static func malformed(_ expected: String) -> DefaultsError {
        DefaultsError(.malformedFile, message: "expected \(expected)")
    }

    /// The state a whole save holds; throws, saying what was expected, for JSON of another shape.
    static func decode(_ file: [String: DefaultsValue]) throws(DefaultsError) -> CloudState {
        func bad(_ what: String) -> DefaultsError { malformed(what) }
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
            state.pending[key] = try decodePending(entry, key: key, generation: state.nextGeneration)
            state.nextGeneration += 1
        }
        if let written = file["written"] {
            guard case .dictionary(let times) = written else { throw bad("\"written\" as an object") }
            for (key, time) in times {
                guard case .integer(let nanoseconds) = time else { throw bad("an integer write time for \"\(key)\"") }
                state.writeTimes[key] = Int64(nanoseconds)
            }
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
