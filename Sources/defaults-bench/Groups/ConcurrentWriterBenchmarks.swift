import Foundation
import ObservableDefaults

/// Group 7: several processes write distinct keys of one suite as fast as they can (write-through, each
/// `set` a locked read-modify-write of the whole file); at the end every process's last value for every
/// one of its keys must be in the file.
enum ConcurrentWriterBenchmarks {
    static let keysPerProcess = 25

    static func run(_ context: BenchContext) -> GroupResult {
        let duration = context.settings.writerDurationNanoseconds
        var group = GroupResult(
            number: 7, title: "Concurrent writers",
            method: "P child processes each set their own \(keysPerProcess) keys (key i mod \(keysPerProcess) := i) through "
                + "`DefaultsSuite` for \(String(format: "%.1f", Double(duration) / 1e9)) s, started together. Then a fresh "
                + "process-level read of the file checks that each key holds its writer's last value. The file holds "
                + "P × \(keysPerProcess) keys.")
        for processes in [1, 4] {
            context.progress("7. concurrent writers: \(processes) process(es)")
            let file = context.directory("writers\(processes)").appendingPathComponent("shared.json")
            let children = (0..<processes).map { index -> ChildProcess in
                do {
                    return try ChildProcess(["hammer", file.path, "w\(index)-", String(keysPerProcess), String(duration)])
                } catch { fail("cannot start a writer: \(error)") }
            }
            for child in children where child.waitForLine(startingWith: "ready") == nil { fail("a writer did not start") }
            let start = monotonicNanoseconds() + 50_000_000
            for child in children { child.send(String(start)) }
            var writes: [Int] = []
            for child in children {
                guard let line = child.waitForLine(startingWith: "writes "), let count = Int(line.dropFirst("writes ".count)) else {
                    fail("a writer did not report its writes")
                }
                writes.append(count)
                child.wait()
            }
            let total = writes.reduce(0, +)
            let seconds = Double(duration) / 1e9
            let lost = lostKeys(file: file, writes: writes)
            group.append(ResultRow(id: "p\(processes).throughput", name: "\(processes) process\(processes == 1 ? "" : "es"): writes/s, all processes together",
                                   unit: .perSecond, statistics: Statistics(single: Double(total) / seconds),
                                   note: "\(Formatting.grouped(Double(total))) writes; per process: " + writes.map { Formatting.grouped(Double($0) / seconds) + "/s" }.joined(separator: ", ")))
            group.append(ResultRow(id: "p\(processes).lost", name: "\(processes) process\(processes == 1 ? "" : "es"): keys lost (must be 0)",
                                   unit: .count, statistics: Statistics(single: Double(lost)),
                                   note: lost == 0 ? "every key holds its writer's last value" : "LOST WRITES"))
        }
        group.relate("p4.throughput", to: "p1.throughput")
        return group
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
