import Foundation
import ObservableDefaults

/// The helper modes the parent starts as separate processes (`defaults-bench --child MODE …`):
///
///     writer library FILE            per stdin line: set "stamp" to the monotonic clock through DefaultsSuite
///     writer raw FILE PADDING        per stdin line: stamp, then write a JSON file with PADDING other keys to a
///                                    temporary file and rename it over FILE (no library code: an editor's save)
///     hammer FILE PREFIX KEYS DURATION_NS
///                                    print "ready", read START_NS (monotonic) from stdin, then from START_NS for
///                                    DURATION_NS: set PREFIXk (k = i mod KEYS) to i, i = 0, 1, …, write-through;
///                                    then print "writes N"
///     load FILE WARMUP               load the small suite WARMUP and drop it (faults in code, runtime and
///                                    Foundation state), then print "rss-before B", load FILE, print
///                                    "rss-after B" and "load-ns T"
///     cloud-observer …               the cloud group's observer processes (CloudChildModes.swift)
///
/// Profiling aids (run under `perf record`; not used by the groups):
///
///     generate FILE KEYS             write a suite of KEYS mixed values like the scale group's
///     open-loop DIR COUNT standard|file   open COUNT absent suites in DIR with those layers
///     load-loop FILE COUNT           load the suite COUNT times (fresh storage each time)
///     reload-loop FILE COUNT         replace the suite with a one-key-changed version and reload(), COUNT times
///     set-loop FILE COUNT            COUNT write-through sets of a new value to one key
///     observed-set-loop FILE COUNT [OTHERS]
///                                    the same while an all-processes observer watches the suite (as an
///                                    @ObservableDefaults object does), and OTHERS more suites beside it,
///                                    each observed too (a process holding many suites)
enum ChildModes {
    static func run(_ arguments: [String]) -> Never {
        switch arguments.first {
        case "writer" where arguments.count == 3 && arguments[1] == "library":
            let suite = openSuite(URL(fileURLWithPath: arguments[2]))
            emit("ready")
            while readLine() != nil {
                suite.set(.integer(monotonicNanoseconds()), forKey: "stamp")
            }
            exit(0)

        case "writer" where arguments.count == 4 && arguments[1] == "raw":
            guard let padding = Int(arguments[3]) else { fail("PADDING must be an integer") }
            emit("ready")
            while readLine() != nil {
                let stamp = monotonicNanoseconds()
                RawFile.renameOver(arguments[2], StampText.file(stamp: stamp, paddingKeys: padding))
            }
            exit(0)

        case "hammer" where arguments.count == 5:
            guard let keys = Int(arguments[3]), let duration = Int(arguments[4]), keys > 0 else {
                fail("hammer: KEYS and DURATION_NS must be integers")
            }
            let suite = openSuite(URL(fileURLWithPath: arguments[1]))
            let names = (0..<keys).map { "\(arguments[2])\($0)" }
            emit("ready")
            guard let line = readLine(), let start = Int(line) else { fail("hammer: expected START_NS on stdin") }
            sleepUntil(start)
            let end = start + duration
            var writes = 0
            while monotonicNanoseconds() < end {
                suite.set(.integer(writes), forKey: names[writes % keys])
                writes += 1
            }
            do { try suite.flush() } catch { fail("hammer: \(error)") }
            emit("writes \(writes)")
            exit(0)

        case "load" where arguments.count == 3:
            do {
                let warmUp = openSuite(URL(fileURLWithPath: arguments[2]))
                Blackhole.consume(warmUp.storedKeys.count)
            }
            let before = residentMemoryBytes()
            let start = monotonicNanoseconds()
            let suite = openSuite(URL(fileURLWithPath: arguments[1]))
            let keyCount = suite.storedKeys.count
            let end = monotonicNanoseconds()
            let after = residentMemoryBytes()
            emit("keys \(keyCount)")
            emit("rss-before \(before)")
            emit("rss-after \(after)")
            emit("load-ns \(end - start)")
            withExtendedLifetime(suite) {}
            exit(0)

        case "generate" where arguments.count == 3:
            guard let keys = Int(arguments[2]) else { fail("KEYS must be an integer") }
            ScaleBenchmarks.generate(URL(fileURLWithPath: arguments[1]), keys: keys)
            exit(0)

        case "open-loop" where arguments.count == 4:
            // Opens COUNT suites, their files absent, in DIR with the standard layers or the file only.
            guard let count = Int(arguments[2]) else { fail("COUNT must be an integer") }
            let layers: [DefaultsLayer] = arguments[3] == "standard" ? DefaultsLayer.standard : [.file]
            for index in 0..<count {
                let url = URL(fileURLWithPath: arguments[1]).appendingPathComponent("open-\(index).json")
                do { Blackhole.consume(try DefaultsSuite(fileURL: url, layers: layers).name.utf8.count) } catch {
                    fail("\(error)")
                }
            }
            exit(0)

        case "load-loop" where arguments.count == 3:
            guard let count = Int(arguments[2]) else { fail("COUNT must be an integer") }
            for _ in 0..<count { Blackhole.consume(openSuite(URL(fileURLWithPath: arguments[1])).storedKeys.count) }
            exit(0)

        case "reload-loop" where arguments.count == 3:
            guard let count = Int(arguments[2]) else { fail("COUNT must be an integer") }
            let file = URL(fileURLWithPath: arguments[1])
            let (original, changed) = ScaleBenchmarks.versions(of: file)
            let suite = openSuite(file)
            for index in 0..<count {
                RawFile.renameOver(file.path, index % 2 == 0 ? changed : original)
                suite.reload()
            }
            exit(0)

        case "set-loop" where arguments.count == 3:
            guard let count = Int(arguments[2]) else { fail("COUNT must be an integer") }
            let suite = openSuite(URL(fileURLWithPath: arguments[1]))
            for index in 0..<count { suite.set(.integer(index), forKey: "counter") }
            exit(0)

        case "observed-set-loop" where arguments.count == 3 || arguments.count == 4:
            guard let count = Int(arguments[2]), let others = integerArgument(arguments, at: 3) else {
                fail("COUNT and OTHERS must be integers")
            }
            let file = URL(fileURLWithPath: arguments[1])
            let suite = openSuite(file)
            let otherSuites = (0..<others).map { index in
                openSuite(file.deletingLastPathComponent().appendingPathComponent("other-\(index).json"))
            }
            let observations = ([suite] + otherSuites).map { $0.observe(keys: ["counter"]) { _ in } }
            for index in 0..<count { suite.set(.integer(index), forKey: "counter") }
            for observation in observations { observation.cancel() }
            exit(0)

        default:
            if MacroChildModes.run(arguments) || CloudChildModes.run(arguments) || FleetChildMode.run(arguments) {
                exit(0)
            }
            fail("unknown child mode: \(arguments.joined(separator: " "))")
        }
    }
}
