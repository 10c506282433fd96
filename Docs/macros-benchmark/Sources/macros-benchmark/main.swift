// Read and write cost of @ObservableDefaults properties versus a plain @Observable class.
// Run: cd Docs/macros-benchmark && swift run -c release
import Foundation
import Observation
import ObservableDefaults

@Observable final class Plain {
    var count = 0
    var name = "n"
}

@ObservableDefaults(suiteName: "odbench")
final class Persisted: Sendable {
    var count = 0
    var name = "n"
    @ObservableOnly var local = 0
}

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

func measure(_ label: String, iterations: Int, _ body: () -> Void) -> Double {
    body()  // warm up
    var best = Double.infinity
    for _ in 0..<5 {
        let start = ContinuousClock.now
        body()
        let elapsed = ContinuousClock.now - start
        let ns = Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9
        best = min(best, ns / Double(iterations))
    }
    print(String(format: "%-44@ %8.2f ns/op", label as NSString, best))
    return best
}

let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("odbench-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let suite = try DefaultsSuite(name: "bench", directory: directory)
let plain = Plain()
let persisted = Persisted(userDefaults: suite)
let n = 2_000_000
let plainRead = measure("plain @Observable read (Int)", iterations: n) { var s = 0; for _ in 0..<n { s &+= plain.count }; blackHole(s) }
let persistedRead = measure("@ObservableDefaults persisted read (Int)", iterations: n) { var s = 0; for _ in 0..<n { s &+= persisted.count }; blackHole(s) }
let onlyRead = measure("@ObservableDefaults @ObservableOnly read (Int)", iterations: n) { var s = 0; for _ in 0..<n { s &+= persisted.local }; blackHole(s) }
let plainStringRead = measure("plain @Observable read (String)", iterations: n) { for _ in 0..<n { blackHole(plain.name) } }
let persistedStringRead = measure("@ObservableDefaults persisted read (String)", iterations: n) { for _ in 0..<n { blackHole(persisted.name) } }
let writes = 2_000
let plainWrite = measure("plain @Observable write", iterations: writes * 100) { for i in 0..<(writes * 100) { plain.count = i } }
let onlyWrite = measure("@ObservableOnly write", iterations: writes * 100) { for i in 0..<(writes * 100) { persisted.local = i } }
var counter = 0
let persistedWrite = measure("persisted write (write-through to file)", iterations: writes) { for _ in 0..<writes { counter += 1; persisted.count = counter } }
var batchCounter = 0
let batchedWrite = measure("persisted write inside performBatchUpdates", iterations: writes * 10) {
    suite.performBatchUpdates { for _ in 0..<(writes * 10) { batchCounter += 1; persisted.count = batchCounter } }
}
print(String(format: "read ratio Int: %.2fx, String: %.2fx; ObservableOnly read ratio: %.2fx", persistedRead / plainRead, persistedStringRead / plainStringRead, onlyRead / plainRead))
print(String(format: "write ratio: ObservableOnly %.1fx, persisted write-through %.0fx, batched %.0fx", onlyWrite / plainWrite, persistedWrite / plainWrite, batchedWrite / plainWrite))
try? FileManager.default.removeItem(at: directory)
