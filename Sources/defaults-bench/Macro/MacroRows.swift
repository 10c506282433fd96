import Foundation
import ObservableDefaults
import Observation

/// Every row that needs the `@ObservableDefaults` macro lives in this directory (this file, the classes in
/// MacroSubjects.swift and the generated FanOutClasses.swift), so the macro rows are added in one place.
enum MacroRows {
    static let isAvailable = true

    /// A row to sample: its id, its name in the report, and the body (`n` operations, returns a checksum).
    typealias BenchRow = (id: String, name: String, body: (Int) -> Int)

    /// Group 1: the property read through the macro's in-memory copy, as a row to sample beside the
    /// others of its type. Row id: `<type>.macro`.
    static func propertyRead(_ context: BenchContext, id: String) -> PropertyReadBenchmarks.Entry {
        let suite = openSuite(context.directory("macro-read-\(id)").appendingPathComponent("read.json"))
        let object = opaque(MacroSettings(userDefaults: suite))
        // Written once, so the values come from the object's own writes and are in the file.
        object.count = 43
        object.count = 42
        switch id {
        case "string":
            return (
                "macro", "String: `@ObservableDefaults` property",
                { n in
                    var sum = 0
                    for _ in 0..<n { sum &+= object.name.utf8.count }
                    return sum
                }
            )
        case "int":
            return (
                "macro", "Int: `@ObservableDefaults` property",
                { n in
                    var sum = 0
                    for _ in 0..<n { sum &+= object.count }
                    return sum
                }
            )
        case "enum":
            return (
                "macro", "enum: `@ObservableDefaults` property",
                { n in
                    var sum = 0
                    for _ in 0..<n { sum &+= object.mode == .balanced ? 1 : 2 }
                    return sum
                }
            )
        default:
            return (
                "macro", "Codable struct: `@ObservableDefaults` property",
                { n in
                    var sum = 0
                    for _ in 0..<n { sum &+= object.endpoint.port }
                    return sum
                }
            )
        }
    }

    /// How many other objects observe the suite of the `macro.batch.shared` row.
    static let sharedSuiteObjects = 100

    /// `count` objects on `suite`, each under a prefix of its own (so none hears another's keys).
    static func otherObjects(on suite: DefaultsSuite, count: Int) -> [AnyObject] {
        (0..<count).map {
            MacroSettings(
                userDefaults: suite, ignoreExternalChanges: nil, prefix: "other\($0).",
                ignoredKeyPathsForExternalUpdates: [])
        }
    }

    /// Group 2: the property write through the macro: a write-through loop, the same loop for inside a
    /// batch, and that on a suite ``sharedSuiteObjects`` other objects observe (what a write costs must not
    /// grow with them). The caller opens the batches on `suite` and `sharedSuite` (so the batch rows can be
    /// sampled interleaved) and keeps `others` alive while sampling.
    static func propertyWrite(_ context: BenchContext)
        -> (
            suite: DefaultsSuite, sharedSuite: DefaultsSuite, others: [AnyObject], writeThrough: BenchRow,
            inBatch: BenchRow, inSharedBatch: BenchRow
        )
    {
        func seeded(_ name: String) -> DefaultsSuite {
            let suite = openSuite(context.directory(name).appendingPathComponent("write.json"))
            suite.performBatchUpdates {
                for index in 0..<9 { suite.set(.string("value \(index)"), forKey: "other\(index)") }
            }
            return suite
        }
        var counter = 0
        func writes(_ object: MacroSettings) -> (Int) -> Int {
            { n in
                for _ in 0..<n {
                    counter &+= 1
                    object.count = counter
                }
                return object.count
            }
        }
        let suite = seeded("macro-write")
        let object = opaque(MacroSettings(userDefaults: suite))
        let sharedSuite = seeded("macro-write-shared")
        let others = otherObjects(on: sharedSuite, count: sharedSuiteObjects)
        let sharing = opaque(MacroSettings(userDefaults: sharedSuite))
        return (
            suite, sharedSuite, others,
            (
                "macro.writethrough", "`@ObservableDefaults` property write-through (in the file on return)",
                writes(object)
            ),
            (
                "macro.batch", "`@ObservableDefaults` property inside `performBatchUpdates` (file write excluded)",
                writes(object)
            ),
            (
                "macro.batch.shared",
                "`@ObservableDefaults` property inside `performBatchUpdates`, \(sharedSuiteObjects) other objects on the suite",
                writes(sharing)
            )
        )
    }

    /// Group 3: an `@ObservableDefaults` class with `count` properties; one key changes on disk; time until
    /// Observation reports that property (`withObservationTracking` `onChange`). Subject id: `n<count>.macro`.
    static func fanOutSubjects(_ context: BenchContext, count: Int, text: GeneratedSuiteText) -> [FanOutSubject] {
        switch count {
        case 10: [fanOutSubject(FanOut10.self, context, count: count, text: text)]
        case 100: [fanOutSubject(FanOut100.self, context, count: count, text: text)]
        case 1_000:
            #if DEFAULTS_BENCH_1000_PROPERTIES
                [fanOutSubject(FanOut1000.self, context, count: count, text: text)]
            #else
                []
            #endif
        default: []
        }
    }

    private static func fanOutSubject<Object: FanOutObject>(
        _ type: Object.Type, _ context: BenchContext, count: Int, text: GeneratedSuiteText
    ) -> FanOutSubject {
        let changedKey = text.changedKey
        var object: Object?
        var suite: DefaultsSuite?
        var recorder: ArrivalRecorder?
        let subject = FanOutSubject(
            context, text: text, id: "n\(count).macro",
            name: "N=\(count): `@ObservableDefaults` class, Observation `onChange` of the changed property"
        ) { openedSuite, openedRecorder in
            let created = Object(
                userDefaults: openedSuite, ignoreExternalChanges: nil, prefix: nil,
                ignoredKeyPathsForExternalUpdates: [])
            (object, suite, recorder) = (created, openedSuite, openedRecorder)
            return [created]
        }
        // Observation tracking is one-shot: arm it again before every change.
        subject.beforeEachChange = { [object, suite, recorder] in
            guard let object, let suite, let recorder else { return }
            withObservationTracking {
                Blackhole.consume(object.changed)
            } onChange: {
                // `onChange` runs before the property's copy is updated; the suite already holds the value.
                if let value = suite.value(Int.self, forKey: changedKey) { recorder.arrive(value) }
            }
        }
        return subject
    }

    /// Group 3 rows for the classes not compiled into this build (the 1,000-property class needs
    /// `-Xswiftc -DDEFAULTS_BENCH_1000_PROPERTIES`; see generate-fanout-classes.sh).
    static func missingFanOutRows(count: Int) -> [ResultRow] {
        [
            .missing(
                id: "n\(count).macro",
                name: "N=\(count): `@ObservableDefaults` class, Observation `onChange` of the changed property",
                reason:
                    "class not compiled in: build with `-Xswiftc -DDEFAULTS_BENCH_1000_PROPERTIES` (it adds about a minute to a build, see Docs/benchmarks.md)"
            )
        ]
    }

    /// Group 5: a hand edit until an `@ObservableDefaults` property changes (Observation `onChange`).
    /// Row id: `macro`.
    static func handEditSide(_ context: BenchContext, paddingKeys: Int) -> LatencySide? {
        var object: HandEditSettings?
        let side = LatencySide.handEdit(context, label: "handedit-macro", paddingKeys: paddingKeys) { suite, _ in
            object = HandEditSettings(userDefaults: suite)
            return nil
        }
        guard let object, let suite = side.suite else { return side }
        let probe = side.probe
        side.keepAlive = object
        // Observation tracking is one-shot: arm it again before every write.
        side.beforeEachWrite = {
            withObservationTracking {
                Blackhole.consume(object.stamp)
            } onChange: {
                // `onChange` runs before the property's copy is updated; the suite already holds the value.
                if let stamp = suite.value(Int.self, forKey: "stamp") { probe.arrive(stamp: stamp) }
            }
        }
        return side
    }

    /// Group 5 rows while the macros are missing (none once they are available).
    static func missingHandEditRows() -> [ResultRow] { [] }
}
