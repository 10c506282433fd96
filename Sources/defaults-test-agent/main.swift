// The child process of the cross-process tests (and a small latency probe): it opens a suite file and
// writes or observes keys as told on the command line. It is a test tool, not a product.
//
//   defaults-test-agent as-user UID COMMAND…         (started as root) become uid and gid UID, then run COMMAND
//
//   defaults-test-agent set FILE KEY VALUE...        set KEY=VALUE pairs (VALUE: int:5, double:1.5,
//                                                     bool:true, string:text, or bare text)
//   defaults-test-agent set-with-file-limit FILE KEY VALUE   set under a 1 KiB file-size limit; exit 3 on EFBIG
//   defaults-test-agent write-many FILE PREFIX COUNT  write PREFIX0 … PREFIX(COUNT-1) = index, one set each
//   defaults-test-agent write-forever FILE KEY        set KEY to 0, 1, 2, … until killed; prints "ready"
//   defaults-test-agent stamp FILE KEY COUNT GAP_MS   COUNT times: set KEY to the monotonic clock in ns
//   defaults-test-agent set-and-exit FILE KEY VALUE   set one key and exit without flush(), as a naive program would
//   defaults-test-agent in-place-saves FILE COUNT PAUSE_US   COUNT times: truncate FILE, write half of a
//                                                     suite, pause holding it open, write the rest, close
//                                                     (keys: constant, other, counter = 1…COUNT)
//   defaults-test-agent increment FILE KEY COUNT      COUNT atomic increments of KEY with update(forKey:)
//   defaults-test-agent increment-object FILE COUNT   COUNT atomic increments of an @ObservableDefaults
//                                                     property with its update(_:_:) (key agent.count)
//   defaults-test-agent hold-lock FILE                take the suite's lock itself, print "locked", hold
//                                                     it until standard input closes or it is killed
//   defaults-test-agent keep-lock-busy FILE SECONDS file|directory   for SECONDS, take the suite's lock (or
//                                                     the directory's commit lock) again and again, each time
//                                                     holding it 20 ms and replacing FILE (or another file in
//                                                     the directory) by a copy before letting go for a moment: a busy
//                                                     holder making progress; prints "locked", then "done"
//   defaults-test-agent churn-lock FILE PAUSE_US      remove and re-create the suite's lock file in a loop,
//                                                     PAUSE_US microseconds apart, until killed; prints "ready"
//   defaults-test-agent set-with-umask UMASK DIR NAME KEY VALUE   set under umask UMASK (octal) in the suite
//                                                     NAME of DIR (created if missing), twice
//   defaults-test-agent many-suites DIR COUNT NOFILE  under RLIMIT_NOFILE=NOFILE, open COUNT suites (all kept
//                                                     open) and write one key in each; prints "wrote COUNT"
//   defaults-test-agent watch-after-descriptor-limit FILE   observe FILE (all processes) while no file
//                                                     descriptor is left, then free them and wait (≤ 20 s) for
//                                                     another process's write; prints the error heard, "freed",
//                                                     then "changed"; exit 4 without the error, 5 without the change
//   defaults-test-agent cloud-local-full-disk DIR GATE   a local-only cloud store in DIR saves "before", then
//                                                     under a 4 KiB file-size limit (a full disk to a writer)
//                                                     writes a 20 KB "big": prints the save's error, waits
//                                                     (≤ 20 s) for the file GATE, lifts the limit and waits
//                                                     (≤ 20 s) for the retried save; prints "saved"; exit 4
//                                                     without the error, 5 without the save
//   defaults-test-agent cloud-local-unwritable DIR    a local-only cloud store in DIR whose copy it may not
//                                                     write: prints "at start: …" per local-copy problem found
//                                                     at start, writes greeting = "from uid UID", prints what it
//                                                     reads, then the save's error (≤ 20 s); exit 4 without one
//   defaults-test-agent suite-start-without-descriptors   the suite "late" opened while no descriptor is
//                                                     left: see SuiteStartWithoutDescriptors.swift
//   defaults-test-agent cloud-start-without-descriptors DIR ENDPOINTS|- NAMESPACE SET_KEY SET_VALUE REMOVE_KEY WAIT_KEY
//                                                     a cloud store made while no descriptor is left: see
//                                                     CloudStartWithoutDescriptors.swift
//   defaults-test-agent cloud-start-without-descriptors-cold …   the same, without warming Dispatch up first
//                                                     (a process that never scheduled a Dispatch timer)
//   defaults-test-agent cloud-local-count DIR         writes n = last + 1, 2, … to a local-only cloud store in
//                                                     DIR (beside 40 filler keys), each synchronized,
//                                                     printing each (forever)
//   defaults-test-agent layers FILE PREFIX KEYS [-KEY VALUE]…   open FILE with the standard layers and
//                                                     .environment(prefix: PREFIX) above the file; print
//                                                     "KEY=VALUE origin=ORIGIN" for each of the comma-separated
//                                                     KEYS (the -KEY VALUE arguments are its argument domain)
//   defaults-test-agent load FILE                     time opening a suite file
//   defaults-test-agent cost DIR N                    time N object(forKey:) reads and N/100 sets
//   defaults-test-agent latency DIR SAMPLES           spawn `stamp` in a child and print latency percentiles
//   defaults-test-agent cloud ENDPOINTS NAMESPACE STATE_DIR COMMAND…   an etcd CloudKeyValueStore (endpoints
//                                                     comma-separated; https ones use the TLS files of
//                                                     $OBSERVABLE_DEFAULTS_CLOUD_CA/_CERT/_KEY); COMMAND is one of: set KEY VALUE…
//                                                     (then synchronize; exit 3 if it failed), batch KEY VALUE…
//                                                     (the same in one performBatchUpdates), increment KEY COUNT
//                                                     (COUNT atomic increments with update(forKey:), then
//                                                     synchronize; prints "ready", then "done SECONDS"), set-and-exit
//                                                     KEY VALUE… (exit at once after the last set), write-series
//                                                     PREFIX COUNT (PREFIXi = i for i < COUNT, each synchronized), watch
//                                                     (print "ready", then "REASON key=value …" per change,
//                                                     until standard input closes), object (a CloudFleet on
//                                                     the store: prints its values, "ready", "changed NAME"
//                                                     per Observation change; reads set/values/sync lines)
import Foundation
import ObservableDefaults
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

func monotonicNanoseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return time.tv_sec * 1_000_000_000 + time.tv_nsec
}

func parseValue(_ text: String) -> DefaultsValue {
    let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { return .string(text) }
    switch parts[0] {
    case "int": return Int(parts[1]).map(DefaultsValue.integer) ?? .string(text)
    case "double": return Double(parts[1]).map(DefaultsValue.double) ?? .string(text)
    case "bool": return .bool(parts[1] == "true")
    case "string": return .string(parts[1])
    default: return .string(text)
    }
}

/// Writes a line to standard output unbuffered, so a parent reading the pipe sees it at once.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Polls `condition` every `interval` microseconds until it holds or `seconds` passed; whether it held.
@discardableResult
func waitUntil(seconds: Int, pollingEvery interval: UInt32 = 10_000, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicNanoseconds() + seconds * 1_000_000_000
    while !condition() {
        guard monotonicNanoseconds() < deadline else { return false }
        usleep(interval)
    }
    return true
}

/// The error `store` reports while a save of its local copy fails (`nil` once one succeeds).
func localCopySaveError(of store: CloudKeyValueStore) -> DefaultsError? {
    store.currentErrors.first { $0.message.contains("cannot write the cloud store's local copy") }
}

/// `error`'s `errno` as the cloud commands print it: `errno N`, or `errno none`.
func errnoText(of error: DefaultsError) -> String { "errno \(error.errorNumber.map(String.init) ?? "none")" }

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("defaults-test-agent: \(message)\n".utf8))
    exit(2)
}

func openSuite(_ path: String) -> DefaultsSuite {
    do {
        return try DefaultsSuite(fileURL: URL(fileURLWithPath: path))
    } catch {
        fail("\(error)")
    }
}

/// The sidecar lock file of the suite file at `path` (`.<file name>.lock` beside it).
func lockPathOf(_ path: String) -> String {
    let url = URL(fileURLWithPath: path)
    return url.deletingLastPathComponent().appendingPathComponent("." + url.lastPathComponent + ".lock").path
}

func flushOrFail(_ suite: DefaultsSuite) {
    do { try suite.flush() } catch { fail("\(error)") }
}

/// The command line after `as-user UID`, which makes the agent (started as root) a process of uid and gid UID
/// before anything else.
let arguments: [String] = {
    var arguments = Array(CommandLine.arguments.dropFirst())
    guard arguments.first == "as-user", arguments.count >= 3 else { return arguments }
    guard let user = UInt32(arguments[1]) else { fail("as-user: \(arguments[1]) is not a uid") }
    guard setgroups(0, nil) == 0, setgid(user) == 0, setuid(user) == 0 else {
        fail("cannot become uid \(user): errno \(errno)")
    }
    arguments.removeFirst(2)
    return arguments
}()
guard let command = arguments.first else { fail("usage: see the comment at the top of main.swift") }

switch command {
case "set" where arguments.count >= 4 && arguments.count % 2 == 0:
    let suite = openSuite(arguments[1])
    var index = 2
    suite.performBatchUpdates {
        while index + 1 < arguments.count {
            suite.set(parseValue(arguments[index + 1]), forKey: arguments[index])
            index += 2
        }
    }
    flushOrFail(suite)

case "set-with-file-limit" where arguments.count == 4:
    // Files may not grow past 1 KiB, so the write fails the way it does on a full disk.
    signal(SIGXFSZ, SIG_IGN)
    var limit = rlimit(rlim_cur: 1024, rlim_max: 1024)
    setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
    let suite = openSuite(arguments[1])
    suite.set(.string(arguments[3]), forKey: arguments[2])
    do {
        try suite.flush()
    } catch  where error.kind == .fileSystem && error.errorNumber == EFBIG {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(3)
    } catch {
        fail("unexpected error: \(error)")
    }

case "write-many" where arguments.count == 4:
    let suite = openSuite(arguments[1])
    guard let count = Int(arguments[3]) else { fail("COUNT must be an integer") }
    for index in 0..<count {
        suite.set(.integer(index), forKey: "\(arguments[2])\(index)")
        flushOrFail(suite)
    }

case "write-forever" where arguments.count == 3:
    let suite = openSuite(arguments[1])
    var counter = 0
    while true {
        suite.set(.integer(counter), forKey: arguments[2])
        suite.set(.string(String(repeating: "x", count: counter % 512)), forKey: "padding")
        if counter == 0 { emit("ready") }
        counter += 1
    }

case "stamp" where arguments.count == 5:
    let suite = openSuite(arguments[1])
    guard let count = Int(arguments[3]), let gap = Int(arguments[4]) else { fail("COUNT and GAP_MS must be integers") }
    for _ in 0..<count {
        usleep(UInt32(gap * 1000))
        suite.set(.integer(monotonicNanoseconds()), forKey: arguments[2])
    }

case "latency" where arguments.count == 3:
    guard let samples = Int(arguments[2]) else { fail("SAMPLES must be an integer") }
    let file = URL(fileURLWithPath: arguments[1]).appendingPathComponent("latency.json")
    let suite = openSuite(file.path)
    suite.set(.integer(0), forKey: "stamp")
    let latencies = LatencyRecorder()
    let observation = suite.observe(keys: ["stamp"]) { change in
        let arrived = monotonicNanoseconds()
        guard change.origin == .outside, case .integer(let sent)? = suite.storedValue(forKey: "stamp") else { return }
        latencies.record(arrived - sent)
    }
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = ["stamp", file.path, "stamp", String(samples), "2"]
    do { try child.run() } catch { fail("cannot start the writer: \(error)") }
    child.waitUntilExit()
    waitUntil(seconds: 2, pollingEvery: 1000) { latencies.count >= samples }
    observation.cancel()
    emit(latencies.report(expected: samples))

case "set-and-exit" where arguments.count == 4:
    let suite = openSuite(arguments[1])
    suite.set(parseValue(arguments[3]), forKey: arguments[2])

case "in-place-saves" where arguments.count == 4:
    guard let count = Int(arguments[2]), let pause = UInt32(arguments[3]) else {
        fail("COUNT and PAUSE_US must be integers")
    }
    for counter in 1...max(count, 1) {
        let text = Array(
            "{\n  \"constant\" : \"kept\",\n  \"counter\" : \(counter),\n  \"other\" : [1, 2, 3]\n}\n".utf8)
        let descriptor = open(arguments[1], O_WRONLY | O_TRUNC | O_CREAT, 0o600)
        if descriptor < 0 { fail("cannot open \(arguments[1]): \(String(cString: strerror(errno)))") }
        let half = text.count / 2
        _ = text.withUnsafeBytes { write(descriptor, $0.baseAddress!, half) }
        usleep(pause)
        _ = text.withUnsafeBytes { write(descriptor, $0.baseAddress! + half, text.count - half) }
        close(descriptor)
        // Sometimes the next save starts at once, racing a reader of this one.
        if counter % 2 == 0 { usleep(pause) }
    }
    emit("done")

case "increment" where arguments.count == 4:
    let suite = openSuite(arguments[1])
    suite.lockWaitLimit = .seconds(60)
    guard let count = Int(arguments[3]) else { fail("COUNT must be an integer") }
    for _ in 0..<count {
        do {
            try suite.update(Int.self, forKey: arguments[2]) { ($0 ?? 0) + 1 }
        } catch {
            fail("\(error)")
        }
    }

case "increment-object" where arguments.count == 3:
    let suite = openSuite(arguments[1])
    suite.lockWaitLimit = .seconds(60)
    guard let count = Int(arguments[2]) else { fail("COUNT must be an integer") }
    let counter = AgentCounter(userDefaults: suite)
    for _ in 0..<count {
        do {
            try counter.update(\.total) { $0 + 1 }
        } catch {
            fail("\(error)")
        }
    }

case "hold-lock" where arguments.count == 2:
    let lockPath = lockPathOf(arguments[1])
    let descriptor = open(lockPath, O_RDONLY | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else { fail("cannot lock \(lockPath)") }
    emit("locked")
    _ = FileHandle.standardInput.readDataToEndOfFile()

case "keep-lock-busy" where arguments.count == 4 && ["file", "directory"].contains(arguments[3]):
    guard let seconds = Double(arguments[2]) else { fail("SECONDS must be a number") }
    let onDirectory = arguments[3] == "directory"
    let directory = URL(fileURLWithPath: arguments[1]).deletingLastPathComponent().path
    let lockPath = onDirectory ? directory : lockPathOf(arguments[1])
    let changed = onDirectory ? directory + "/busy-progress" : arguments[1]
    let end = monotonicNanoseconds() + Int(seconds * 1e9)
    var round = 0
    while round == 0 || monotonicNanoseconds() < end {
        let descriptor =
            onDirectory
            ? open(lockPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : open(lockPath, O_RDONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else { fail("cannot lock \(lockPath)") }
        if round == 0 { emit("locked") }
        usleep(20_000)
        let temporary = changed + ".busy-new"
        // The same contents in a new file: progress the lock's waiters can see, and nothing of theirs lost.
        let contents = FileManager.default.contents(atPath: changed) ?? Data("{}\n".utf8)
        guard (try? contents.write(to: URL(fileURLWithPath: temporary))) != nil,
            rename(temporary, changed) == 0
        else { fail("cannot replace \(changed)") }
        close(descriptor)
        round += 1
    }
    emit("done")

case "churn-lock" where arguments.count == 3:
    let lockPath = lockPathOf(arguments[1])
    guard let pause = UInt32(arguments[2]) else { fail("PAUSE_US must be an integer") }
    emit("ready")
    var round = 0
    while true {
        // Alternately remove the lock file and replace it by a new file renamed over it.
        if round % 2 == 0 {
            unlink(lockPath)
        } else {
            let temporary = lockPath + ".new"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            if descriptor >= 0 { close(descriptor) }
            rename(temporary, lockPath)
        }
        round += 1
        usleep(pause)
    }

case "set-with-umask" where arguments.count == 6:
    guard let mask = mode_t(arguments[1], radix: 8) else { fail("UMASK must be octal") }
    umask(mask)
    let directory = URL(fileURLWithPath: arguments[2], isDirectory: true)
    let suite: DefaultsSuite
    do { suite = try DefaultsSuite(name: arguments[3], directory: directory) } catch { fail("\(error)") }
    suite.set(parseValue(arguments[5]), forKey: arguments[4])
    flushOrFail(suite)
    suite.set(.string("second"), forKey: arguments[4] + "-second")
    flushOrFail(suite)

case "many-suites" where arguments.count == 4:
    guard let count = Int(arguments[2]), let files = rlim_t(arguments[3]) else {
        fail("COUNT and NOFILE must be integers")
    }
    var limit = rlimit(rlim_cur: files, rlim_max: files)
    guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
        fail("cannot lower RLIMIT_NOFILE")
    }
    let directory = URL(fileURLWithPath: arguments[1], isDirectory: true)
    var suites: [DefaultsSuite] = []
    for index in 0..<count {
        do {
            let suite = try DefaultsSuite(name: "suite\(index)", directory: directory)
            suite.set(.integer(index), forKey: "index")
            flushOrFail(suite)
            suites.append(suite)
        } catch {
            fail("suite \(index): \(error)")
        }
    }
    emit("wrote \(suites.count)")

case "watch-after-descriptor-limit" where arguments.count == 2:
    let suite = openSuite(arguments[1])
    let heard = Heard()
    let errors = suite.observeErrors { error in heard.withLock { $0.errors.append(error) } }
    // Every descriptor taken: the first watch of this process cannot make its inotify instance.
    let taken = takeEveryDescriptor()
    let observation = suite.observe(keys: ["k"]) { change in
        if change.origin == .outside { heard.withLock { $0.changed = true } }
    }
    freeDescriptors(taken)
    guard let error = heard.withLock({ $0.errors.first }) else { exit(4) }
    emit("error: \(error)")
    emit("freed")
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    writer.arguments = ["set", arguments[1], "k", "int:1"]
    do { try writer.run() } catch { fail("cannot start the writer: \(error)") }
    writer.waitUntilExit()
    let changed = waitUntil(seconds: 20) { heard.withLock { $0.changed } }
    observation.cancel()
    errors.cancel()
    guard changed else { exit(5) }
    emit("changed")

case "cloud-local-full-disk" where arguments.count == 3:
    signal(SIGXFSZ, SIG_IGN)
    let store = CloudKeyValueStore.localOnly(directory: URL(fileURLWithPath: arguments[1]))
    store.set("small", forKey: "before")
    _ = store.synchronize()
    func saveError() -> DefaultsError? { localCopySaveError(of: store) }
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
    let unlimited = limit.rlim_cur
    limit.rlim_cur = 4096  // the soft limit only: the process may raise it again
    guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0 else { fail("setrlimit: \(errno)") }
    store.set(String(repeating: "x", count: 20_000), forKey: "big")
    guard waitUntil(seconds: 20, { saveError() != nil }), let error = saveError() else { exit(4) }
    emit("error: \(error) \(errnoText(of: error))")
    waitUntil(seconds: 20) { FileManager.default.fileExists(atPath: arguments[2]) }
    limit.rlim_cur = unlimited
    guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit) == 0 else { fail("setrlimit: \(errno)") }
    guard waitUntil(seconds: 20, { saveError() == nil }) else { exit(5) }
    emit("saved")

case "cloud-local-unwritable" where arguments.count == 2:
    let store = CloudKeyValueStore.localOnly(directory: URL(fileURLWithPath: arguments[1]))
    for error in store.currentErrors where error.message.contains("local copy") {
        emit("at start: \(error.message) \(errnoText(of: error))")
    }
    store.set("from uid \(getuid())", forKey: "greeting")
    emit("reads: \(store.string(forKey: "greeting") ?? "nothing")")
    guard waitUntil(seconds: 20, { localCopySaveError(of: store) != nil }), let error = localCopySaveError(of: store)
    else { exit(4) }
    emit("saving: \(error.message) \(errnoText(of: error))")

case "layers" where arguments.count >= 4:
    let suite: DefaultsSuite
    do {
        suite = try DefaultsSuite(
            fileURL: URL(fileURLWithPath: arguments[1]),
            layers: [.managed, .arguments, .environment(prefix: arguments[2]), .file, .system, .global])
    } catch {
        fail("\(error)")
    }
    for key in arguments[3].split(separator: ",").map(String.init) {
        let value = suite.value(forKey: key).map { "\($0)" } ?? "nil"
        emit("\(key)=\(value) origin=\(suite.origin(forKey: key).map { "\($0)" } ?? "nil")")
    }

case "load" where arguments.count == 2:
    let start = monotonicNanoseconds()
    let suite = openSuite(arguments[1])
    let end = monotonicNanoseconds()
    emit("loaded \(suite.storedKeys.count) keys in \(Double(end - start) / 1_000_000) ms")

case "cost" where arguments.count == 3:
    guard let iterations = Int(arguments[2]) else { fail("N must be an integer") }
    let suite = openSuite(URL(fileURLWithPath: arguments[1]).appendingPathComponent("cost.json").path)
    for index in 0..<100 { suite.set(.string("value \(index)"), forKey: "key\(index)") }
    var checksum = 0
    let readStart = monotonicNanoseconds()
    for index in 0..<iterations {
        if let text = suite.object(forKey: "key\(index % 100)") as? String { checksum &+= text.utf8.count }
    }
    let readEnd = monotonicNanoseconds()
    let writes = max(1, iterations / 100)
    let writeStart = monotonicNanoseconds()
    for index in 0..<writes { suite.set(.integer(index), forKey: "counter") }
    let writeEnd = monotonicNanoseconds()
    let batchStart = monotonicNanoseconds()
    suite.performBatchUpdates { for index in 0..<iterations { suite.set(.integer(index), forKey: "batched") } }
    let batchEnd = monotonicNanoseconds()
    emit("object(forKey:) \(Double(readEnd - readStart) / Double(iterations)) ns/op (checksum \(checksum))")
    emit("set (write-through, 100-key file) \(Double(writeEnd - writeStart) / Double(writes) / 1000) µs/op")
    emit("set inside a batch \(Double(batchEnd - batchStart) / Double(iterations)) ns/op")

case "cloud-local-forever" where arguments.count == 2:
    // Saves a local-only cloud store's copy over and over ("N " and N % 7000 x, so a torn value shows).
    let store = CloudKeyValueStore.localOnly(directory: URL(fileURLWithPath: arguments[1]))
    var counter = 0
    while true {
        store.set("\(counter) " + String(repeating: "x", count: counter % 7000), forKey: "record")
        if counter == 0 {
            _ = store.synchronize()
            emit("ready")
        }
        counter += 1
    }

case "cloud-local-count" where arguments.count == 2:
    // Writes n = 1, 2, 3… to a local-only cloud store, each followed by synchronize(), then prints it: a
    // number printed is on disk. 40 filler keys of 300 bytes make the whole state larger than a local write
    // writes at once, so the writes go to the journal.
    let store = CloudKeyValueStore.localOnly(directory: URL(fileURLWithPath: arguments[1]))
    for index in 0..<40 where store.string(forKey: "filler\(index)") == nil {
        store.set(String(repeating: "f", count: 300), forKey: "filler\(index)")
    }
    var counter = store.longLong(forKey: "n")
    while true {
        counter += 1
        store.set(counter, forKey: "n")
        store.synchronize()
        emit("\(counter)")
    }

case "cloud-local-write-many" where arguments.count == 4:
    // A local-only store's `write-many` (see CloudCommands.swift).
    writeMany(
        CloudKeyValueStore.localOnly(directory: URL(fileURLWithPath: arguments[1])), prefix: arguments[2],
        count: arguments[3], hold: false)

case "suite-start-without-descriptors" where arguments.count == 1:
    runSuiteStartWithoutDescriptors()

case "cloud-start-without-descriptors" where arguments.count == 8:
    runCloudStartWithoutDescriptors(Array(arguments.dropFirst()))

case "cloud-start-without-descriptors-cold" where arguments.count == 8:
    runCloudStartWithoutDescriptors(Array(arguments.dropFirst()), warmingUpDispatch: false)

case "cloud" where arguments.count >= 5:
    runCloudCommand(Array(arguments.dropFirst()))

default:
    fail("unknown command or wrong arguments: \(arguments.joined(separator: " "))")
}

/// The object of `increment-object`: with a prefix and a custom key, its property is stored as `agent.count`.
@ObservableDefaults(prefix: "agent.")
final class AgentCounter {
    @DefaultsKey(userDefaultsKey: "count") var total = 0
}

/// What `watch-after-descriptor-limit` heard, from the watcher's thread.
final class Heard: Sendable {
    private let state = Mutex<(errors: [DefaultsError], changed: Bool)>(([], false))

    func withLock<R>(_ body: (inout (errors: [DefaultsError], changed: Bool)) -> R) -> R {
        state.withLock { body(&$0) }
    }
}

/// Collects latencies from the watcher thread.
final class LatencyRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int] = []

    var count: Int { lock.withLock { values.count } }

    func record(_ nanoseconds: Int) { lock.withLock { values.append(nanoseconds) } }

    func report(expected: Int) -> String {
        let sorted = lock.withLock { values.sorted() }
        guard !sorted.isEmpty else { return "no samples arrived" }
        func percentile(_ p: Double) -> String {
            let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
            return String(format: "%.3f ms", Double(value) / 1_000_000)
        }
        return
            "samples \(sorted.count)/\(expected): p50 \(percentile(0.5)), p90 \(percentile(0.9)), p99 \(percentile(0.99)), max \(percentile(1.0))"
    }
}
