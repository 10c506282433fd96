import Foundation
import ObservableDefaults

/// Group 2: writing one property — ours write-through (the value is in the file when `set` returns),
/// ours inside a batch, a plain `@Observable` property, and Foundation's `UserDefaults.set` on Linux.
enum PropertyWriteBenchmarks {
    static func run(_ context: BenchContext) -> GroupResult {
        let settings = context.settings
        var group = GroupResult(
            number: 2, title: "Property write",
            method:
                "One write of a new Int value per operation (values never repeat, so no write is skipped as equal). "
                + "Our suites hold 10 keys. The write-through rows and their raw floors are sampled interleaved, then the "
                + "in-memory rows (inside a batch) with the plain `@Observable` write and the in-memory floor. Ratios are "
                + "against the plain `@Observable` write, except the watched rows (against the same save unwatched) and the "
                + "write-through `set` (against the raw save).")

        let plain = opaque(PlainSettings())
        var counter = 0
        let directory = context.directory("write")
        let suite = openSuite(directory.appendingPathComponent("write.json"))
        suite.performBatchUpdates {
            for index in 0..<9 { suite.set(.string("value \(index)"), forKey: "other\(index)") }
            suite.set(.integer(0), forKey: BenchKeys.count)
        }
        // The same write on a suite that an all-processes observer watches (as every @ObservableDefaults
        // object's suite is): the file watcher sees each write come back and checks it.
        // Seeded like `suite`, so both files hold the same 10 keys and only the watching differs.
        let watchedSuite = openSuite(context.directory("write-watched").appendingPathComponent("write.json"))
        watchedSuite.performBatchUpdates {
            for index in 0..<9 { watchedSuite.set(.string("value \(index)"), forKey: "other\(index)") }
            watchedSuite.set(.integer(0), forKey: BenchKeys.count)
        }
        let watching = watchedSuite.observe(keys: [BenchKeys.count]) { change in Blackhole.consume(change.keys.count) }
        defer { watching.cancel() }
        // The same 10 keys in a file a person laid out (issue 32): comments, four spaces, a trailing comma.
        // A write edits the changed member in place, the rest stays byte for byte.
        let handFormattedURL = context.directory("write-by-hand").appendingPathComponent("write.json")
        var handFormattedText = "// Written by hand.\n{\n    \"\(BenchKeys.count)\": 0, // the counter\n"
        handFormattedText += "    /* the other settings */\n"
        for index in 0..<9 { handFormattedText += "    \"other\(index)\": \"value \(index)\", // setting \(index)\n" }
        handFormattedText += "}\n"
        RawFile.renameOver(handFormattedURL.path, Array(handFormattedText.utf8))
        let handFormattedSuite = openSuite(handFormattedURL)
        let fsyncSuite = openSuite(directory.appendingPathComponent("write-fsync.json"))
        fsyncSuite.synchronizesToDisk = true
        let scratch = ScratchUserDefaults("write")
        defer { scratch.remove() }
        let defaults = scratch.defaults
        let macro = MacroRows.propertyWrite(context)
        let floors = WriteFloors(
            context, bytes: RawFile.readAll(directory.appendingPathComponent("write.json").path) ?? [])
        defer { floors.stop() }

        // Everything that writes through, with its floors, is sampled interleaved.
        context.progress("2. property write: write-through rows and their floors, interleaved")
        typealias Entry = (id: String, name: String, maxBatch: Int, body: (Int) -> Int)
        let writeThrough: [Entry] = [
            (macro.writeThrough.id, macro.writeThrough.name, 1 << 12, macro.writeThrough.body),
            (
                "suite.writethrough", "`DefaultsSuite.set` write-through (in the file on return)", 1 << 12,
                { n in
                    for _ in 0..<n {
                        counter &+= 1
                        suite.set(.integer(counter), forKey: BenchKeys.count)
                    }
                    return counter
                }
            ),
            (
                "suite.handformatted",
                "`DefaultsSuite.set` write-through on a file laid out by hand with comments (edited in place)", 1 << 12,
                { n in
                    for _ in 0..<n {
                        counter &+= 1
                        handFormattedSuite.set(.integer(counter), forKey: BenchKeys.count)
                    }
                    return counter
                }
            ),
            (
                "suite.watched", "`DefaultsSuite.set` write-through, suite observed for all processes (file watched)",
                1 << 12,
                { n in
                    for _ in 0..<n {
                        counter &+= 1
                        watchedSuite.set(.integer(counter), forKey: BenchKeys.count)
                    }
                    return counter
                }
            )
        ]
        let floorRows: [Entry] = floors.saveRows.map { ($0.id, $0.name, 1 << 12, $0.body) }
        let others: [Entry] = [
            (
                "suite.fsync", "`DefaultsSuite.set` write-through with `synchronizesToDisk` (fsync)", 1 << 10,
                { n in
                    for _ in 0..<n {
                        counter &+= 1
                        fsyncSuite.set(.integer(counter), forKey: BenchKeys.count)
                    }
                    return counter
                }
            ),
            (
                "userdefaults", "`UserDefaults.set(_:forKey:)` (Linux; in memory, written later)", 1 << 22,
                { n in
                    for _ in 0..<n {
                        counter &+= 1
                        defaults.set(counter, forKey: BenchKeys.count)
                    }
                    return counter
                }
            ),
            (
                "userdefaults.synchronize", "`UserDefaults.set` + `synchronize()` (Linux; in the file on return)",
                1 << 12,
                { n in
                    var synced = 0
                    for _ in 0..<n {
                        counter &+= 1
                        defaults.set(counter, forKey: BenchKeys.count)
                        if defaults.synchronize() { synced &+= 1 }
                    }
                    return synced &+ counter
                }
            )
        ]
        let entries = writeThrough + floorRows + others
        let statistics = Sampler.interleaved(
            settings, entries.map { Sampler.Candidate(maxBatch: $0.maxBatch, body: $0.body) })
        for (entry, stats) in zip(entries, statistics) {
            group.append(ResultRow(id: entry.id, name: entry.name, statistics: stats))
        }

        // The in-memory rows, with the plain write and the in-memory floor, interleaved: the whole measurement
        // runs inside one open batch on each suite, so each operation is the in-memory update and the
        // in-process notification; the single file write happens when the batches close, after sampling.
        context.progress("2. property write: in-memory rows (inside a batch) and their floor, interleaved")
        let inMemory: [(id: String, name: String, body: (Int) -> Int)] = [
            (
                "plain", "plain `@Observable` property",
                { n in
                    for _ in 0..<n {
                        counter &+= 1
                        plain.count = counter
                    }
                    return plain.count
                }
            ),
            floors.memoryRow,
            floors.copyRow,
            macro.inBatch,
            macro.inSharedBatch,
            (
                "suite.batch", "`DefaultsSuite.set` inside `performBatchUpdates` (file write excluded)",
                { n in
                    for _ in 0..<n {
                        counter &+= 1
                        suite.set(.integer(counter), forKey: BenchKeys.count)
                    }
                    return counter
                }
            )
        ]
        let inMemoryStatistics = suite.performBatchUpdates {
            macro.suite.performBatchUpdates {
                macro.sharedSuite.performBatchUpdates {
                    withExtendedLifetime(macro.others) {
                        Sampler.interleaved(settings, inMemory.map { Sampler.Candidate(body: $0.body) })
                    }
                }
            }
        }
        for (entry, stats) in zip(inMemory, inMemoryStatistics) {
            group.append(ResultRow(id: entry.id, name: entry.name, statistics: stats))
        }

        group.append(
            ResultRow(
                id: "suite.batch100", name: "batch of 100 `set`s + its one file write, per `set`",
                statistics: Sampler.perOperation(settings, maxBatch: 1 << 12) { n in
                    for _ in 0..<n {
                        suite.performBatchUpdates {
                            for _ in 0..<100 {
                                counter &+= 1
                                suite.set(.integer(counter), forKey: BenchKeys.count)
                            }
                        }
                    }
                    return counter
                }.scaled(by: 1.0 / 100)))

        for id in [
            "macro.writethrough", "macro.batch", "macro.batch.shared", "suite.fsync", "suite.batch", "suite.batch100",
            "userdefaults",
            "userdefaults.synchronize", WriteFloors.memoryID, WriteFloors.copyID
        ] {
            group.relate(id, to: "plain")
        }
        // The watched write against the unwatched one, and both against the raw floor's pair.
        group.relate("suite.watched", to: "suite.writethrough")
        group.relate("suite.writethrough", to: WriteFloors.saveVariants[0].unwatchedID)
        group.relate("suite.handformatted", to: WriteFloors.saveVariants[0].unwatchedID)
        for variant in WriteFloors.saveVariants { group.relate(variant.watchedID, to: variant.unwatchedID) }
        group.relate(WriteFloors.checkedWatchID, to: WriteFloors.saveVariants[0].unwatchedID)
        group.notes.append(
            "Write-through rows include the key-granular read-modify-write under `flock`, the atomic "
                + "rename and the in-process notification; the 10-key file is rewritten on every `set`.")
        return group
    }
}

extension Statistics {
    /// The same distribution in another unit (e.g. per batch → per item).
    func scaled(by factor: Double) -> Statistics {
        var copy = self
        copy.min *= factor
        copy.p50 *= factor
        copy.p90 *= factor
        copy.p99 *= factor
        copy.max *= factor
        copy.mean *= factor
        return copy
    }
}
