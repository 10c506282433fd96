import Testing
@testable import ObservableDefaults
import TestSupport

/// `SuiteMemory` keeps the file's side and the pending changes so that a write hashes its key once; it must
/// follow exactly the rules of the two maps it replaced (what readers see; the changes made here that are not
/// in the file yet, `nil` for a removal), which this test keeps as its model, over seeded random sequences of
/// every operation.
@Suite struct SuiteMemoryTests {
    /// The rules as two maps: memory, and the pending changes on top of the file.
    struct Model {
        var values: [ExactKey: DefaultsValue] = [:]
        var pending: [ExactKey: DefaultsValue?] = [:]

        mutating func set(_ value: DefaultsValue?, forKey key: ExactKey) -> Bool {
            if values[key] == value { return false }
            values[key] = value
            pending[key] = .some(value)
            return true
        }

        mutating func adopt(_ value: DefaultsValue?, forKey key: ExactKey) -> Bool {
            if values[key] == value { return false }
            values[key] = value
            return true
        }

        mutating func landed(_ written: [ExactKey: DefaultsValue?]) {
            for (key, value) in written where pending[key].map({ $0 == value }) == true {
                pending.removeValue(forKey: key)
            }
        }

        mutating func replace(with contents: [ExactKey: DefaultsValue]) -> Set<ExactKey> {
            var merged = contents
            for (key, value) in pending { merged[key] = value }
            defer { values = merged }
            return SuiteStorage.changedKeys(from: values, to: merged)
        }
    }

    @Test func followsTheRulesOfMemoryWithPendingChangesOnTop() {
        var random = SeededGenerator(seed: 0x5017_E0E0)
        let keys: [ExactKey] = (0..<6).map { ExactKey("k\($0)") }
        func value(_ random: inout SeededGenerator) -> DefaultsValue? {
            random.chance(0.25) ? nil : .integer(random.int(0...3))
        }
        for _ in 0..<300 {
            var memory = SuiteMemory(), model = Model()
            // Handles a writer kept, as a property of the macros keeps its key's (some from before changes
            // landed, some for another key, some from another suite's memory: each must be ignored unless it
            // still points at the key's change).
            var other = SuiteMemory()
            var kept: [ExactKey: PendingHandle] = [:]
            // Snapshots of the pending changes, landing later (a write that raced newer changes).
            var writes: [[ExactKey: DefaultsValue?]] = []
            for _ in 0..<60 {
                let key = keys[random.int(0...keys.count - 1)]
                switch random.int(0...4) {
                case 0:
                    let value = value(&random)
                    #expect(memory.set(value, forKey: key) == model.set(value, forKey: key))
                case 1:
                    let value = value(&random)
                    var handle: PendingHandle? =
                        switch random.int(0...3) {
                        case 0: kept[keys[random.int(0...keys.count - 1)]]
                        case 1:
                            {
                                var foreign: PendingHandle?; _ = other.set(.integer(9), forKey: key, handle: &foreign);
                                return foreign
                            }()
                        default: kept[key]
                        }
                    #expect(memory.set(value, forKey: key, handle: &handle) == model.set(value, forKey: key))
                    // The handle handed back points at the key's change while it is pending, and none otherwise.
                    #expect((handle == nil) == (model.pending[key] == nil))
                    if let current = handle {
                        var again: PendingHandle? = current
                        #expect(
                            !memory.set(memory[key], forKey: key, handle: &again) && again?.position == current.position
                        )
                    }
                    kept[key] = handle
                case 2:
                    // Memory takes a file value only for a key that is not pending (the merge's rule).
                    if model.pending[key] == nil {
                        let value = value(&random)
                        #expect(memory.adopt(value, forKey: key) == model.adopt(value, forKey: key))
                    }
                case 3:
                    if random.chance(0.5) { writes.append(model.pending) }
                    if !writes.isEmpty && random.chance(0.6) {
                        let written = writes.removeFirst()
                        memory.landed(written)
                        model.landed(written)
                    }
                default:
                    var contents: [ExactKey: DefaultsValue] = [:]
                    for key in keys { if let value = value(&random) { contents[key] = value } }
                    let comparing = random.chance(0.8)
                    let changed = memory.replaceFileContents(with: contents, comparing: comparing)
                    let expected = model.replace(with: contents)
                    #expect(changed == (comparing ? expected : []))
                }
                #expect(memory.values == model.values)
                #expect(memory.pendingChanges == model.pending)
                #expect(memory.hasPendingChanges == !model.pending.isEmpty)
                #expect(
                    Set(memory.pendingKeys) == Set(model.pending.keys)
                        && memory.pendingKeys.count == model.pending.count)
                for key in keys {
                    #expect(memory[key] == model.values[key])
                    #expect(memory.isPending(key) == (model.pending[key] != nil))
                }
            }
        }
    }
}
