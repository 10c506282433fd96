import Foundation

/// Where a change to a suite came from.
public enum DefaultsChangeOrigin: String, Sendable, Equatable {
    /// Made through a ``DefaultsSuite`` in this process.
    case thisProcess
    /// Made by another process or a person editing the file, and seen by watching the file.
    case outside
}

/// Which changes an observer hears (the `limitToInstance` choice of the macros).
public enum DefaultsObservationScope: String, Sendable, Equatable {
    /// Only changes made through a ``DefaultsSuite`` on the same file in this process; the file is not
    /// watched for this observer.
    case thisProcess
    /// Changes from this process, other processes and hand edits of the file (the file is watched with
    /// inotify while such an observer exists).
    case allProcesses
}

/// One change to a suite: the keys whose effective value changed (limited to the observer's filter) and where the
/// change came from.
public struct DefaultsChange: Sendable, Equatable, CustomStringConvertible {
    /// The keys whose stored value changed, were added, or were removed. (Two keys that differ only by
    /// Unicode normalisation and changed together are one element of this set.)
    public var keys: Set<String>
    /// Whether the change was made in this process or came from outside. A change of another layer than
    /// the suite's file (see ``layer``) is ``DefaultsChangeOrigin/outside``.
    public var origin: DefaultsChangeOrigin
    /// The layer the change came from when it is not the suite's own file: the managed, system or global
    /// file that changed (see ``DefaultsLayer``); `nil` for the suite's file and registered defaults.
    public var layer: DefaultsOrigin?

    /// Creates a change event.
    public init(keys: Set<String>, origin: DefaultsChangeOrigin, layer: DefaultsOrigin? = nil) {
        self.keys = keys
        self.origin = origin
        self.layer = layer
    }

    /// The origin and the sorted changed keys, e.g. `outside: host, port`, with the layer when it is not
    /// the suite's file (`outside (system /etc/xdg/observable-defaults/app.json): port`).
    public var description: String {
        let source = layer.map { "\(origin.rawValue) (\($0))" } ?? origin.rawValue
        return "\(source): \(keys.sorted().joined(separator: ", "))"
    }
}

/// Which keys an observer hears about: an explicit key set, a key prefix, or both (a key must pass every
/// filter given); no filter means every key. Keys and the prefix match by their exact bytes (see
/// ``ExactKey``): keys that differ only by Unicode normalisation are different keys.
struct DefaultsKeyFilter: Sendable {
    var keys: Set<ExactKey>?
    var prefix: String?

    init(keys: Set<String>?, prefix: String?) {
        self.keys = keys.map { Set($0.map { ExactKey($0) }) }
        self.prefix = prefix
    }

    /// The changed keys that pass, as the `String`s a ``DefaultsChange`` holds.
    func matching(_ changed: Set<ExactKey>) -> Set<String> {
        var relevant = Set<String>()
        forEachPassing(changed) { key in
            relevant.insert(key.string)
            return true
        }
        return relevant
    }

    /// Whether at least one of `changed` passes.
    func matchesAny(_ changed: Set<ExactKey>) -> Bool {
        var found = false
        forEachPassing(changed) { _ in
            found = true
            return false
        }
        return found
    }

    /// Calls `body` with each of `changed` that passes until it returns false, walking the smaller of the
    /// two sets (a reload can change thousands of keys; an object names a few).
    private func forEachPassing(_ changed: Set<ExactKey>, _ body: (ExactKey) -> Bool) {
        if let keys, keys.count < changed.count {
            for key in keys where changed.contains(key) && passesPrefix(key) {
                if !body(key) { return }
            }
        } else {
            for key in changed where matches(key) {
                if !body(key) { return }
            }
        }
    }

    func matches(_ key: ExactKey) -> Bool {
        if let keys, !keys.contains(key) { return false }
        return passesPrefix(key)
    }

    private func passesPrefix(_ key: ExactKey) -> Bool {
        guard let prefix else { return true }
        return key.hasBytePrefix(prefix)
    }
}
