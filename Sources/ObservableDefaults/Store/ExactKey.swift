import Foundation

/// A suite key that compares, hashes and sorts by its exact UTF-8 bytes.
///
/// Swift `String` equality is canonical equivalence: `"caf\u{E9}"` (NFC) equals `"cafe\u{301}"` (NFD), so a
/// `[String: DefaultsValue]` would hold only one of two keys a file holds, and the next write would drop
/// the other. Files, other tools and other processes see bytes, so every map of a suite's keys uses this
/// wrapper; the public API keeps `String`.
struct ExactKey: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    let string: String

    init(_ string: String) { self.string = string }
    init(stringLiteral value: String) { self.string = value }

    var description: String { string }

    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        // The same representation is the same bytes (the same small string, or the same storage): a key
        // compared with the one it was made from, as a property's key is at each write, is not read.
        if MemoryLayout<String>.size == 16 {
            let a = unsafeBitCast(lhs.string, to: (UInt64, UInt64).self)
            let b = unsafeBitCast(rhs.string, to: (UInt64, UInt64).self)
            if a == b { return true }
        }
        return lhs.string.utf8.count == rhs.string.utf8.count
            && lhs.withBytes { a in
                rhs.withBytes { b in a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
            }
    }

    func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Byte order, the order the writers sort keys in (for NFC text, Swift's `String` order too).
    static func < (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.withBytes { a in
            rhs.withBytes { b in
                let common = min(a.count, b.count)
                let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                return order < 0 || (order == 0 && a.count < b.count)
            }
        }
    }

    /// Whether the key's bytes start with `prefix`'s bytes (the prefix rule of observers and objects).
    func hasBytePrefix(_ prefix: String) -> Bool {
        string.utf8.starts(with: prefix.utf8)
    }

    private func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(string.utf8).withUnsafeBufferPointer(body)
    }
}

extension Dictionary where Key == ExactKey {
    /// The same entries keyed by `String` (keys equal only by canonical equivalence collapse into one).
    var stringKeyed: [String: Value] {
        Dictionary<String, Value>(map { ($0.key.string, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

extension Dictionary where Key == String {
    /// The same entries keyed by their exact bytes.
    var exactKeyed: [ExactKey: Value] {
        Dictionary<ExactKey, Value>(uniqueKeysWithValues: map { (ExactKey($0.key), $0.value) })
    }
}
