/// An observer that hears the keys its ``DefaultsKeyFilter`` passes.
protocol KeyFilteredObserver {
    var filter: DefaultsKeyFilter { get }
}

/// The change observers of one suite or cloud store, by token, with the keys they name indexed: finding who
/// hears a key costs about the same however many observers the others are. Each object of the macros
/// observes its own keys, and an app may keep hundreds of objects on one suite; without the index every
/// write of every property asked every one of them (42 µs a write with 1,000 objects, 135 ns alone).
struct ObserverRegistry<Token: Hashable, Observer: KeyFilteredObserver> {
    /// Every observer, by token.
    private(set) var all: [Token: Observer] = [:]
    /// For each key, the observers whose filter names it in an explicit key set.
    private var tokensByKey: [ExactKey: [Token]] = [:]
    /// The observers without a key set (every key, or a prefix): asked about every key.
    private var unindexed: [Token] = []

    /// Up to this many observers, a key is checked against each filter rather than looked up: a few
    /// comparisons cost less than hashing the key, and a property's write usually finds only its own
    /// object's observer, which it skips.
    static var scanLimit: Int { 8 }

    var isEmpty: Bool { all.isEmpty }

    subscript(token: Token) -> Observer? { all[token] }

    mutating func insert(_ observer: Observer, for token: Token) {
        all[token] = observer
        if let keys = observer.filter.keys {
            for key in keys { tokensByKey[key, default: []].append(token) }
        } else {
            unindexed.append(token)
        }
    }

    @discardableResult
    mutating func remove(_ token: Token) -> Observer? {
        guard let observer = all.removeValue(forKey: token) else { return nil }
        if let keys = observer.filter.keys {
            for key in keys {
                tokensByKey[key]?.removeAll { $0 == token }
                if tokensByKey[key]?.isEmpty == true { tokensByKey[key] = nil }
            }
        } else {
            unindexed.removeAll { $0 == token }
        }
        return observer
    }

    /// Calls `body` with each observer whose filter passes `key`, except `skipped`.
    func forEach(hearing key: ExactKey, except skipped: Token? = nil, _ body: (Token, Observer) -> Void) {
        if all.count <= Self.scanLimit {
            // By index, so the skipped observer is not copied (a copy retains and releases its references).
            var index = all.startIndex
            while index != all.endIndex {
                if all.keys[index] != skipped, all.values[index].filter.matches(key) {
                    body(all.keys[index], all.values[index])
                }
                all.formIndex(after: &index)
            }
            return
        }
        for token in tokensByKey[key] ?? [] where token != skipped {
            if let observer = all[token], observer.filter.matches(key) { body(token, observer) }
        }
        for token in unindexed where token != skipped {
            if let observer = all[token], observer.filter.matches(key) { body(token, observer) }
        }
    }

    /// Calls `body` once with each observer whose filter passes at least one of `keys`.
    func forEach(hearingAnyOf keys: Set<ExactKey>, _ body: (Token, Observer) -> Void) {
        if all.count <= Self.scanLimit || keys.count >= all.count {
            for (token, observer) in all where observer.filter.matchesAny(keys) { body(token, observer) }
            return
        }
        var found = Set<Token>()
        for key in keys {
            for token in tokensByKey[key] ?? [] where !found.contains(token) {
                if let observer = all[token], observer.filter.matches(key) {
                    found.insert(token)
                    body(token, observer)
                }
            }
        }
        for token in unindexed {
            if let observer = all[token], observer.filter.matchesAny(keys) { body(token, observer) }
        }
    }

    /// The observers ``forEach(hearing:except:_:)`` calls, in an array.
    func observers(hearing key: ExactKey, except skipped: Token? = nil) -> [Observer] {
        var found: [Observer] = []
        forEach(hearing: key, except: skipped) { found.append($1) }
        return found
    }

    /// The observers ``forEach(hearingAnyOf:_:)`` calls, in an array.
    func observers(hearingAnyOf keys: Set<ExactKey>) -> [Observer] {
        var found: [Observer] = []
        forEach(hearingAnyOf: keys) { found.append($1) }
        return found
    }
}

extension ObserverRegistry: Sendable where Token: Sendable, Observer: Sendable {}
