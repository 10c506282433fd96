/// Where one key's change sits among ``SuiteMemory``'s pending changes, for a writer that writes the key
/// again (a property of the macros keeps the one its last write got back): a write that brings a handle
/// still pointing at its key's change updates it in place without hashing the key.
///
/// Only a hint, and plain data, so keeping and passing it costs no reference counting: memory compares the
/// key at the position (a key has at most one change there), so a handle from before a change landed and
/// the positions moved, from another suite's memory, or from when the object's prefix made another key, is
/// simply not used, and the key is looked up.
@usableFromInline
struct PendingHandle: Sendable {
    let position: Int
}
