import Testing
@testable import ObservableDefaults
import TestSupport

/// The observers a registry finds for a key are exactly those whose filter passes it, whether it scans (a
/// few observers) or looks the key up (many), after removals too.
struct ObserverRegistryTests {
    struct Probe: KeyFilteredObserver {
        let filter: DefaultsKeyFilter
    }

    static let keys: [String] = (0..<12).map { "k\($0)" } + ["p.a", "p.b", "q.a", "q.b", "caf\u{E9}", "cafe\u{301}"]

    /// Filters of every kind: key sets (with and without a prefix), a prefix alone, every key.
    static func filter(_ seed: Int) -> DefaultsKeyFilter {
        var generator = SeededGenerator(seed: UInt64(seed))
        let kind = generator.next() % 5
        let count = 1 + Int(generator.next() % 4)
        let named = Set((0..<count).map { _ in keys[Int(generator.next() % UInt64(keys.count))] })
        switch kind {
        case 0: return DefaultsKeyFilter(keys: nil, prefix: nil)
        case 1: return DefaultsKeyFilter(keys: nil, prefix: generator.next() % 2 == 0 ? "p." : "k1")
        case 2: return DefaultsKeyFilter(keys: named, prefix: "p.")
        default: return DefaultsKeyFilter(keys: named, prefix: nil)
        }
    }

    @Test(arguments: [3, 8, 9, 60])
    func findsExactlyTheObserversWhoseFilterPasses(count: Int) {
        var registry = ObserverRegistry<Int, Probe>()
        var expected: [Int: DefaultsKeyFilter] = [:]
        for token in 0..<count {
            let filter = Self.filter(token * 7 + count)
            registry.insert(Probe(filter: filter), for: token)
            expected[token] = filter
        }
        for token in stride(from: 0, to: count, by: 3) {  // removals must leave nothing behind in the index
            #expect(registry.remove(token) != nil)
            expected[token] = nil
        }
        #expect(registry.remove(-1) == nil)

        for key in Self.keys.map({ ExactKey($0) }) {
            for skipped in [nil, 1, 2] as [Int?] {
                var found: [Int] = []
                registry.forEach(hearing: key, except: skipped) { token, _ in found.append(token) }
                let wanted = expected.filter { $0.key != skipped && $0.value.matches(key) }.map(\.key)
                #expect(
                    found.sorted() == wanted.sorted(),
                    "\(count) observers, key \(key), skipping \(skipped.map(String.init) ?? "none")")
            }
        }
        for size in [1, 2, 5, Self.keys.count] {
            for start in stride(from: 0, to: Self.keys.count, by: 4) {
                let changed = Set((0..<size).map { ExactKey(Self.keys[(start + $0 * 5) % Self.keys.count]) })
                var found: [Int] = []
                registry.forEach(hearingAnyOf: changed) { token, _ in found.append(token) }
                let wanted = expected.filter { entry in changed.contains { entry.value.matches($0) } }.map(\.key)
                #expect(found.sorted() == wanted.sorted(), "\(count) observers, keys \(changed.sorted())")
                #expect(Set(found).count == found.count, "an observer called twice for \(changed.sorted())")
            }
        }
    }

    @Test func matchingWalksWhicheverSetIsSmallerWithTheSameResult() {
        let many = Set((0..<500).map { ExactKey("key\($0)") })
        let filter = DefaultsKeyFilter(keys: ["key3", "key499", "absent", "other"], prefix: "key")
        #expect(filter.matching(many) == ["key3", "key499"])
        #expect(filter.matching(["key3", "absent", "zzz"]) == ["key3"])
        #expect(filter.matchesAny(many))
        #expect(!filter.matchesAny(["zzz", "other"]))  // "other" is named but fails the prefix
    }
}
