// defaults-bench: speed, latency, scale and memory of ObservableDefaults side by side with plain
// @Observable, Foundation's UserDefaults (swift-corelibs-foundation on Linux) and the raw inotify floor.
//
//   swift run -c release defaults-bench [--quick] [--json FILE] [--only 1,4,…] [--directory DIR]
//                                       [--compile-times FILE] [--cloud-state-directory DIR]
//
// `--cloud-state-directory DIR` adds group 9's propagation rows of the library and the store with their local
// copies in DIR: on another filesystem than the scratch directory's (etcd's data), the layout of a fleet,
// whose members have disks of their own (see Docs/benchmarks.md, group 9).
// `--compile-times FILE` adds group 8 from the output of Compile/time-macro-compile.sh.
// Prints a Markdown report on standard output (progress goes to standard error). `--child MODE …` is the
// helper mode the cross-process groups start this executable in (see ChildModes.swift).
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--child" {
    ChildModes.run(Array(arguments.dropFirst()))
}

var settings = RunSettings.full
var jsonPath: String?
var onlyGroups: Set<Int>?
var parentDirectory = URL(fileURLWithPath: NSTemporaryDirectory())
var compileTimesPath: String?
var cloudStateParent: URL?
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--quick":
        settings = .quickRun
    case "--json" where !arguments.isEmpty:
        jsonPath = arguments.removeFirst()
    case "--only" where !arguments.isEmpty:
        onlyGroups = Set(arguments.removeFirst().split(separator: ",").compactMap { Int($0) })
    case "--directory" where !arguments.isEmpty:
        parentDirectory = URL(fileURLWithPath: arguments.removeFirst())
    case "--compile-times" where !arguments.isEmpty:
        compileTimesPath = arguments.removeFirst()
    case "--cloud-state-directory" where !arguments.isEmpty:
        cloudStateParent = URL(fileURLWithPath: arguments.removeFirst())
    case "--help", "-h":
        print(
            "usage: defaults-bench [--quick] [--json FILE] [--only 1,2,…] [--directory DIR] [--compile-times FILE] [--cloud-state-directory DIR]"
        )
        exit(0)
    default:
        fail("unknown argument \(argument); see --help")
    }
}

let context: BenchContext
do {
    context = try BenchContext(settings: settings, parent: parentDirectory, cloudStateParent: cloudStateParent)
} catch {
    fail("cannot create a scratch directory in \(parentDirectory.path) or \(cloudStateParent?.path ?? "-"): \(error)")
}

let groups: [(Int, (BenchContext) -> GroupResult)] = [
    (1, PropertyReadBenchmarks.run),
    (2, PropertyWriteBenchmarks.run),
    (3, FanOutBenchmarks.run),
    (4, CrossProcessLatencyBenchmarks.run),
    (5, HandEditLatencyBenchmarks.run),
    (6, ScaleBenchmarks.run),
    (7, ConcurrentWriterBenchmarks.run),
    (CloudBenchmarks.number, CloudBenchmarks.run),
    (LayerBenchmarks.number, LayerBenchmarks.run),
    (FleetBenchmarks.number, FleetBenchmarks.run)
]

let startedAt = ISO8601DateFormatter().string(from: Date())
let loadBefore = MachineDescription.loadAverage()
let machine = MachineDescription.current(temporaryDirectory: parentDirectory)
let start = monotonicNanoseconds()
var results: [GroupResult] = []
for (number, run) in groups where onlyGroups?.contains(number) ?? true {
    // Write back the previous group's dirty pages now, so its file traffic is not charged to this group.
    sync()
    results.append(run(context))
}
if let compileTimesPath {
    do {
        results.append(try CompileTimeResults.read(URL(fileURLWithPath: compileTimesPath)))
    } catch {
        fail("cannot read --compile-times \(compileTimesPath): \(error)")
    }
}
let report = BenchmarkReport(
    machine: machine, settings: settings, startedAt: startedAt,
    durationSeconds: Double(monotonicNanoseconds() - start) / 1e9,
    loadAverageBefore: loadBefore, loadAverageAfter: MachineDescription.loadAverage(),
    groups: results, targets: Targets.evaluate(results), checksum: Blackhole.total)
context.removeScratch()

print(MarkdownReport.render(report), terminator: "")
if let jsonPath {
    do {
        try JSONReport.write(report, to: URL(fileURLWithPath: jsonPath))
    } catch {
        fail("cannot write \(jsonPath): \(error)")
    }
}
