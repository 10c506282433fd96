import Foundation
import ObservableDefaults

/// Group 7: several processes write distinct keys of one suite as fast as they can (write-through, each
/// `set` a locked read-modify-write of the whole file); at the end every process's last value for every
/// one of its keys must be in the file.
enum ConcurrentWriterBenchmarks {
    static let keysPerProcess = 25

    static func run(_ context: BenchContext) -> GroupResult {
        let rounds = context.settings.quick ? 1 : 3
        let duration = context.settings.writerDurationNanoseconds / rounds
        var group = GroupResult(
            number: 7, title: "Concurrent writers",
            method:
                "P child processes each set their own \(keysPerProcess) keys (key i mod \(keysPerProcess) := i) through "
                + "`DefaultsSuite` for \(String(format: "%.1f", Double(duration) / 1e9)) s, started together, on a fresh suite file. "
                + "Then a fresh load of the file checks that each key holds its writer's last value (the file holds "
                + "P × \(keysPerProcess) keys). P = 1 and P = 4 alternate over \(rounds) round\(rounds == 1 ? "" : "s"); "
                + "p50/p90/p99 are over the rounds.")
        var throughput: [Int: [Double]] = [:]
        var perProcess: [Int: [Double]] = [:]
        var lost: [Int: Int] = [:]
        for round in 0..<rounds {
            for processes in round % 2 == 0 ? [1, 4] : [4, 1] {
                context.progress("7. concurrent writers: round \(round + 1)/\(rounds), \(processes) process(es)")
                let writes = runWriters(
                    context, processes: processes, duration: duration, label: "writers\(processes)-\(round)")
                let seconds = Double(duration) / 1e9
                throughput[processes, default: []].append(Double(writes.counts.reduce(0, +)) / seconds)
                perProcess[processes, default: []].append(contentsOf: writes.counts.map { Double($0) / seconds })
                lost[processes, default: 0] += writes.lost
            }
        }
        for processes in [1, 4] {
            let label = "\(processes) process\(processes == 1 ? "" : "es")"
            let each = Statistics(perProcess[processes] ?? [])
            group.append(
                ResultRow(
                    id: "p\(processes).throughput", name: "\(label): writes/s, all processes together",
                    unit: .perSecond, statistics: Statistics(throughput[processes] ?? []),
                    note: processes > 1
                        ? "per process: p50 \(Formatting.grouped(each.p50))/s, min \(Formatting.grouped(each.min))/s"
                        : nil))
            let lostKeys = lost[processes] ?? 0
            group.append(
                ResultRow(
                    id: "p\(processes).lost", name: "\(label): keys lost (must be 0)",
                    unit: .count, statistics: Statistics(single: Double(lostKeys)),
                    note: lostKeys == 0 ? "every key held its writer's last value, in every round" : "LOST WRITES"))
        }
        group.relate("p4.throughput", to: "p1.throughput")
        return group
    }

    /// Starts `processes` writers on a fresh file, waits for them, and checks the file.
    private static func runWriters(_ context: BenchContext, processes: Int, duration: Int, label: String) -> (
        counts: [Int], lost: Int
    ) {
        let file = context.directory(label).appendingPathComponent("shared.json")
        let children = (0..<processes).map { index -> ChildProcess in
            do {
                return try ChildProcess(["hammer", file.path, "w\(index)-", String(keysPerProcess), String(duration)])
            } catch { fail("cannot start a writer: \(error)") }
        }
        for child in children where child.waitForLine(startingWith: "ready") == nil { fail("a writer did not start") }
        let start = monotonicNanoseconds() + 50_000_000
        for child in children { child.send(String(start)) }
        var counts: [Int] = []
        for child in children {
            guard let line = child.waitForLine(startingWith: "writes "),
                let count = Int(line.dropFirst("writes ".count))
            else {
                fail("a writer did not report its writes")
            }
            counts.append(count)
            child.wait()
        }
        return (counts, lostKeys(file: file, writes: counts))
    }

    /// Keys whose value in the file is not the last value their writer set.
    private static func lostKeys(file: URL, writes: [Int]) -> Int {
        let suite = openSuite(file)
        var lost = 0
        for (process, count) in writes.enumerated() {
            for key in 0..<keysPerProcess where key < count {
                // The last i < count with i mod keysPerProcess == key.
                let expected = key + (count - 1 - key) / keysPerProcess * keysPerProcess
                if suite.value(Int.self, forKey: "w\(process)-\(key)") != expected { lost += 1 }
            }
        }
        return lost
    }
}
