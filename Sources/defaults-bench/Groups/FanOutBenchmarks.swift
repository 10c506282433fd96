import Foundation
import ObservableDefaults
import Synchronization

/// A suite file of `count` integer keys `p0 …` in which one key, ``changedKey``, gets a new value per
/// sample: the text around that value is built once, so producing a version costs a concatenation.
struct GeneratedSuiteText {
    let keys: [String]
    let changedKey: String
    private let head: String
    private let tail: String

    init(count: Int, keyPrefix: String = "p") {
        let keys = (0..<count).map { "\(keyPrefix)\($0)" }
        let changedKey = keys[count / 2]
        self.keys = keys
        self.changedKey = changedKey
        let lines = keys.map { "  \"\($0)\" : \($0 == changedKey ? "\u{0}" : String($0.dropFirst(keyPrefix.count)))" }
        let text = "{\n" + lines.joined(separator: ",\n") + "\n}\n"
        let parts = text.split(separator: "\u{0}", omittingEmptySubsequences: false)
        head = String(parts[0])
        tail = String(parts[1])
    }

    /// The file's bytes with ``changedKey`` set to `value`.
    func bytes(changedValue value: Int) -> [UInt8] {
        Array((head + String(value) + tail).utf8)
    }
}

/// Group 3: one key changes on disk in a suite mapped to an object with N persisted properties; the cost
/// from the file event to the notification for that one property, for N = 10, 100, 1,000.
enum FanOutBenchmarks {
    static func run(_ context: BenchContext) -> GroupResult {
        let settings = context.settings
        var group = GroupResult(
            number: 3, title: "Outside-change fan-out",
            method:
                "This process replaces the suite file (rename-over, one of N keys changed) and times from just before "
                + "`rename(2)` to the moment the observer for that key runs (inotify wake-up, re-read, diff, dispatch). "
                + "All subjects are set up first, then sampled in alternating rounds so machine noise hits every N alike. "
                + "The re-read rows time what the Apple library does on each change notification: read all N keys back "
                + "from `UserDefaults` with a cast.")

        var subjects: [FanOutSubject] = []
        var missing: [Int: [ResultRow]] = [:]
        for count in settings.fanOutSizes {
            let text = GeneratedSuiteText(count: count)
            subjects.append(
                FanOutSubject(
                    context, text: text, id: "n\(count).object",
                    name: "N=\(count): ours, one observer per object, dispatch to the changed property"
                ) { suite, recorder in
                    [objectObserver(suite: suite, text: text, recorder: recorder)]
                })
            subjects.append(
                FanOutSubject(
                    context, text: text, id: "n\(count).perproperty",
                    name: "N=\(count): ours, N observers (one per property, key-filtered)"
                ) { suite, recorder in
                    text.keys.map { key in
                        suite.observe(keys: [key]) { change in
                            guard change.origin == .outside, let value = suite.value(Int.self, forKey: key) else {
                                return
                            }
                            if key == text.changedKey { recorder.arrive(value) }
                        }
                    }
                })
            let macroSubjects = MacroRows.fanOutSubjects(context, count: count, text: text)
            if macroSubjects.isEmpty {
                missing[count] = MacroRows.missingFanOutRows(count: count)
            } else {
                subjects.append(contentsOf: macroSubjects)
            }
        }

        let rounds = settings.quick ? 1 : 5
        let warmUp = max(3, settings.eventSamples / 10)
        for subject in subjects { subject.sample(warmUp) }
        for subject in subjects { subject.reset() }
        for round in 0..<rounds {
            context.progress("3. fan-out: round \(round + 1)/\(rounds)")
            let chunk = settings.eventSamples / rounds + (round < settings.eventSamples % rounds ? 1 : 0)
            for subject in round % 2 == 0 ? subjects : subjects.reversed() { subject.sample(chunk) }
        }

        for count in settings.fanOutSizes {
            for subject in subjects where subject.text.keys.count == count { group.append(subject.finish()) }
            group.append(contentsOf: missing[count] ?? [])

            context.progress("3. fan-out N=\(count): re-read all N keys from UserDefaults")
            let keys = GeneratedSuiteText(count: count).keys
            let scratch = ScratchUserDefaults("fanout\(count)")
            let defaults = scratch.defaults
            for (index, key) in keys.enumerated() { defaults.set(index, forKey: key) }
            group.append(
                ResultRow(
                    id: "n\(count).reread",
                    name: "N=\(count): re-read all N keys (`UserDefaults.object(forKey:) as? Int`), per notification",
                    statistics: Sampler.perOperation(settings) { n in
                        var sum = 0
                        for _ in 0..<n {
                            for key in keys { sum &+= defaults.object(forKey: key) as? Int ?? 0 }
                        }
                        return sum
                    }))
            scratch.remove()
        }
        if let first = settings.fanOutSizes.first {
            for count in settings.fanOutSizes.dropFirst() {
                for variant in ["object", "perproperty", "macro", "reread"] {
                    group.relate("n\(count).\(variant)", to: "n\(first).\(variant)")
                }
            }
        }
        group.notes.append(
            "Ratios compare each row with the same variant at N=\(settings.fanOutSizes.first ?? 10); the target is N=1,000 within 2× of N=10."
        )
        group.notes.append(
            "The suite file holds the N keys, so the re-read and parse of the file (and the diff) grow with N; "
                + "group 6 shows the load cost alone.")
        return group
    }

    /// What a generated object does: one observer for all its keys, mapping each changed key to its property.
    private static func objectObserver(suite: DefaultsSuite, text: GeneratedSuiteText, recorder: ArrivalRecorder)
        -> DefaultsObservation
    {
        let properties = PropertyValues(count: text.keys.count)
        let indexByKey = Dictionary(uniqueKeysWithValues: text.keys.enumerated().map { ($1, $0) })
        let changedKey = text.changedKey
        return suite.observe(prefix: "p") { change in
            guard change.origin == .outside else { return }
            for key in change.keys {
                guard let index = indexByKey[key], let value = suite.value(Int.self, forKey: key) else { continue }
                properties.set(index, value)
                if key == changedKey { recorder.arrive(value) }
            }
        }
    }
}

/// One fan-out subject: its own directory and N-key suite file, the observers under test, and its samples.
final class FanOutSubject {
    let text: GeneratedSuiteText
    let id: String
    let name: String
    private let path: String
    private let recorder = ArrivalRecorder()
    private var keepAlive: [AnyObject] = []
    private var samples: [Double] = []
    private var dropped = 0
    private var value = 1_000_000
    /// Runs before each change is written (e.g. to arm one-shot Observation tracking).
    var beforeEachChange: (() -> Void)?

    /// Writes the N-key file, opens the suite, and lets `install` attach the observers (whatever it returns
    /// is kept alive until ``finish()``; `DefaultsObservation`s are cancelled then).
    init(
        _ context: BenchContext, text: GeneratedSuiteText, id: String, name: String,
        install: (DefaultsSuite, ArrivalRecorder) -> [AnyObject]
    ) {
        self.text = text
        self.id = id
        self.name = name
        path = context.directory("fanout-\(id)").appendingPathComponent("settings.json").path
        RawFile.renameOver(path, text.bytes(changedValue: 0))
        let suite = openSuite(URL(fileURLWithPath: path))
        keepAlive = [suite] + install(suite, recorder)
    }

    /// Times `count` outside changes of the changed key until the recorder hears each value.
    func sample(_ count: Int) {
        for _ in 0..<count {
            value += 1
            recorder.expect(value)
            beforeEachChange?()
            let sent = RawFile.renameOver(path, text.bytes(changedValue: value))
            if let arrived = recorder.wait() { samples.append(Double(arrived - sent)) } else { dropped += 1 }
        }
    }

    func reset() {
        samples.removeAll()
        dropped = 0
    }

    func finish() -> ResultRow {
        for case let observation as DefaultsObservation in keepAlive { observation.cancel() }
        keepAlive.removeAll()
        beforeEachChange = nil
        return ResultRow(
            id: id, name: name, statistics: Statistics(samples),
            note: dropped > 0 ? "\(dropped) events timed out (2 s)" : nil)
    }
}

/// The in-memory copies of an object's N properties, written by its observer.
final class PropertyValues: Sendable {
    private let values: Mutex<[Int]>

    init(count: Int) { values = Mutex([Int](repeating: 0, count: count)) }

    func set(_ index: Int, _ value: Int) { values.withLock { $0[index] = value } }
}
