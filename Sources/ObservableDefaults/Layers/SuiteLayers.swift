/// One value of a layer other than the suite's file, with where it comes from.
struct LayerEntry: Sendable, Equatable {
    var value: DefaultsValue
    var origin: DefaultsOrigin
}

/// The values of a suite's layers other than its file, kept in the storage's state: each source's last good
/// values, and the merged maps of the sources above the file and below it.
///
/// Resolved when a layer changes, not when a key is read: a read is `above[key] ?? file[key] ?? below[key]`,
/// and with no layer holding anything both maps are empty and cost a count check each. An environment
/// layer is the exception: a variable is found by the key's variable name, so with one (opt-in) a read
/// walks the layers in order.
struct SuiteLayers {
    /// The values of one source.
    enum Source {
        /// Values by key.
        case keyed([ExactKey: LayerEntry])
        /// An environment layer: values by variable name.
        case environment(EnvironmentLayer, [String: LayerEntry])

        func entry(_ key: ExactKey) -> LayerEntry? {
            switch self {
            case .keyed(let values): values[key]
            case .environment(let layer, let values): values[layer.variableName(forKey: key.string)]
            }
        }
    }

    /// Each source's last good values, in precedence order (highest first).
    private var sources: [Source]
    /// How many sources are above the suite's file.
    let fileIndex: Int
    /// Whether a source is an environment layer (reads walk the layers).
    private let hasEnvironment: Bool
    /// For each key, the entry of the highest keyed source above the file that has it.
    private var above: [ExactKey: LayerEntry] = [:]
    /// For each key, the entry of the highest keyed source below the file that has it.
    private var below: [ExactKey: LayerEntry] = [:]

    /// The sources' first values, `fileIndex` of them above the file.
    init(sources: [Source], fileIndex: Int) {
        self.sources = sources
        self.fileIndex = fileIndex
        hasEnvironment = sources.contains {
            if case .environment = $0 { return true }
            return false
        }
        above = Self.merged(sources[..<fileIndex])
        below = Self.merged(sources[fileIndex...])
    }

    /// For each key, the entry of the highest keyed source of `sources` that has it. Usually no source or
    /// one holds anything (no managed or system file, or only the global domain's): then no key is visited.
    private static func merged(_ sources: ArraySlice<Source>) -> [ExactKey: LayerEntry] {
        var merged: [ExactKey: LayerEntry] = [:]
        // From the lowest up, each over the ones below; the first taken whole (its storage is shared).
        for case .keyed(let values) in sources.reversed() where !values.isEmpty {
            if merged.isEmpty {
                merged = values
            } else {
                merged.merge(values) { _, higher in higher }
            }
        }
        return merged
    }

    /// Whether a layer above the file may hide the file's value of some key.
    var mayShadow: Bool { !above.isEmpty || hasEnvironment && fileIndex > 0 }

    /// Whether any layer holds a value.
    var hasValues: Bool { !above.isEmpty || !below.isEmpty || hasEnvironment }

    /// The entry of the highest layer above the file that has `key`.
    @inline(__always)
    func entryAbove(_ key: ExactKey) -> LayerEntry? {
        if hasEnvironment { return walk(key, 0..<fileIndex) }
        return above.isEmpty ? nil : above[key]
    }

    /// The entry of the highest layer below the file that has `key`.
    @inline(__always)
    func entryBelow(_ key: ExactKey) -> LayerEntry? {
        if hasEnvironment { return walk(key, fileIndex..<sources.count) }
        return below.isEmpty ? nil : below[key]
    }

    private func walk(_ key: ExactKey, _ range: Range<Int>) -> LayerEntry? {
        for position in range {
            if let entry = sources[position].entry(key) { return entry }
        }
        return nil
    }

    /// The value readers see for `key` when the file (with pending changes) holds `file`.
    @inline(__always)
    func effective(_ key: ExactKey, file: DefaultsValue?) -> DefaultsValue? {
        if let entry = entryAbove(key) { return entry.value }
        if file != nil { return file }
        return entryBelow(key)?.value
    }

    /// Whether a higher layer hides the file's value of `key`.
    func shadows(_ key: ExactKey) -> Bool { entryAbove(key) != nil }

    /// The managed entry forcing `key`, if any.
    func forced(_ key: ExactKey) -> LayerEntry? {
        guard let entry = entryAbove(key), entry.origin.isForced else { return nil }
        return entry
    }

    /// Whether a change of the file's value of `key` from `old` to `new` changes what readers see.
    func fileChangeIsVisible(_ key: ExactKey, old: DefaultsValue?, new: DefaultsValue?) -> Bool {
        if shadows(key) { return false }
        if old != nil && new != nil { return old != new }
        return effective(key, file: old) != effective(key, file: new)
    }

    /// The keys whose entry in keyed source `index` differs from `values`.
    func differingKeys(source index: Int, _ values: [ExactKey: LayerEntry]) -> Set<ExactKey> {
        guard case .keyed(let old) = sources[index] else { return [] }
        var keys = Set<ExactKey>()
        for (key, entry) in values where old[key] != entry { keys.insert(key) }
        for key in old.keys where values[key] == nil { keys.insert(key) }
        return keys
    }

    /// Replaces keyed source `index`'s values, `keys` being the ``differingKeys(source:_:)``, and merges them
    /// again.
    mutating func replace(source index: Int, with values: [ExactKey: LayerEntry], keys: Set<ExactKey>) {
        sources[index] = .keyed(values)
        remerge(keys, above: index < fileIndex)
    }

    private mutating func remerge(_ keys: Set<ExactKey>, above isAbove: Bool) {
        let range = isAbove ? 0..<fileIndex : fileIndex..<sources.count
        for key in keys {
            var merged: LayerEntry?
            for position in range {
                if case .keyed(let values) = sources[position], let entry = values[key] {
                    merged = entry
                    break
                }
            }
            if isAbove { above[key] = merged } else { below[key] = merged }
        }
    }

    /// Every key of the layers merged with the file's values `file`, as readers see them (an environment
    /// variable counts under the keys the other layers, the file or `known` have).
    func merged(over file: [ExactKey: DefaultsValue], known: some Sequence<ExactKey>) -> [ExactKey: DefaultsValue] {
        if above.isEmpty && below.isEmpty && !hasEnvironment { return file }
        var values = below.mapValues(\.value)
        values.merge(file) { _, file in file }
        values.merge(above.mapValues(\.value)) { _, above in above }
        if hasEnvironment {
            var keys = Set(values.keys)
            keys.formUnion(known)
            for key in keys {
                if let value = effective(key, file: file[key]) { values[key] = value }
            }
        }
        return values
    }
}
