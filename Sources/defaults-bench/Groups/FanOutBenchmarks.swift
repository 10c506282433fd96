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
            method: "This process replaces the suite file (rename-over, one of N keys changed) and times from just before "
                + "`rename(2)` to the moment the observer for that key runs (inotify wake-up, re-read, diff, dispatch). "
                + "The re-read rows time what the Apple library does on each change notification: read all N keys back "
                + "from `UserDefaults` with a cast.")

        for count in settings.fanOutSizes {
            let text = GeneratedSuiteText(count: count)

            context.progress("3. fan-out N=\(count): one observer per object")
            group.append(measure(context, count: count, text: text, id: "n\(count).object",
                                 name: "N=\(count): ours, one observer per object, dispatch to the changed property") { suite, recorder in
                [objectObserver(suite: suite, text: text, recorder: recorder)]
            })

            context.progress("3. fan-out N=\(count): one observer per property")
            group.append(measure(context, count: count, text: text, id: "n\(count).perproperty",
                                 name: "N=\(count): ours, N observers (one per property, key-filtered)") { suite, recorder in
                text.keys.map { key in
                    suite.observe(keys: [key]) { change in
                        guard change.origin == .outside, let value = suite.value(Int.self, forKey: key) else { return }
                        if key == text.changedKey { recorder.arrive(value) }
                    }
                }
            })

            group.append(contentsOf: MacroRows.fanOut(context, count: count, text: text))

            context.progress("3. fan-out N=\(count): re-read all N keys from UserDefaults")
            let scratch = ScratchUserDefaults("fanout\(count)")
            let defaults = scratch.defaults
            for (index, key) in text.keys.enumerated() { defaults.set(index, forKey: key) }
            let keys = text.keys
            group.append(ResultRow(
                id: "n\(count).reread", name: "N=\(count): re-read all N keys (`UserDefaults.object(forKey:) as? Int`), per notification",
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
            for count in settings.fanOutSizes {
                for variant in ["object", "perproperty", "macro"] { group.relate("n\(count).\(variant)", to: "n\(first).\(variant)") }
                group.relate("n\(count).reread", to: "n\(first).reread")
            }
        }
        group.notes.append("Ratios compare each row with the same variant at N=\(settings.fanOutSizes.first ?? 10); the target is N=1,000 within 2× of N=10.")
        group.notes.append("The suite file holds the N keys, so the re-read and parse of the file grow with N; the dispatch itself does not.")
        return group
    }

    /// What a generated object does: one observer for all its keys, mapping each changed key to its property.
    private static func objectObserver(suite: DefaultsSuite, text: GeneratedSuiteText, recorder: ArrivalRecorder) -> DefaultsObservation {
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

    /// Writes the N-key file, installs the observers, then times `eventSamples` outside changes.
    static func measure(
        _ context: BenchContext, count: Int, text: GeneratedSuiteText, id: String, name: String,
        observers install: (DefaultsSuite, ArrivalRecorder) -> [DefaultsObservation]
    ) -> ResultRow {
        let path = context.directory("fanout-\(id)").appendingPathComponent("settings.json").path
        RawFile.renameOver(path, text.bytes(changedValue: 0))
        let suite = openSuite(URL(fileURLWithPath: path))
        let recorder = ArrivalRecorder()
        let observations = install(suite, recorder)
        defer { observations.forEach { $0.cancel() } }
        return timeOutsideChanges(context, path: path, text: text, recorder: recorder, id: id, name: name)
    }

    /// Times outside changes of ``GeneratedSuiteText/changedKey`` until `recorder` hears each value.
    static func timeOutsideChanges(
        _ context: BenchContext, path: String, text: GeneratedSuiteText, recorder: ArrivalRecorder, id: String, name: String
    ) -> ResultRow {
        var value = 1_000_000
        let (statistics, dropped) = Sampler.events(count: context.settings.eventSamples, warmUp: max(3, context.settings.eventSamples / 10)) {
            value += 1
            recorder.expect(value)
            let sent = RawFile.renameOver(path, text.bytes(changedValue: value))
            guard let arrived = recorder.wait() else { return nil }
            return arrived - sent
        }
        return ResultRow(id: id, name: name, statistics: statistics, note: dropped > 0 ? "\(dropped) events timed out (2 s)" : nil)
    }
}

/// The in-memory copies of an object's N properties, written by its observer.
final class PropertyValues: Sendable {
    private let values: Mutex<[Int]>

    init(count: Int) { values = Mutex([Int](repeating: 0, count: count)) }

    func set(_ index: Int, _ value: Int) { values.withLock { $0[index] = value } }
}
