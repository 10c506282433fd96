import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Many threads on shared handles of one suite, another process writing the same file, observers of
/// every scope, batches: nothing is lost, memory ends equal to the file, every observer hears every key
/// it should. Bounded to well under a second in a debug build; run under ThreadSanitizer too
/// (`swift test --sanitize=thread`).
@Suite struct ConcurrencyStressTests {
    let directory = TemporaryDirectory()

    @Test func threadsAndAnotherProcessAgreeWithTheFile() throws {
        let threadCount = 4, keysPerThread = 12, rounds = 3, childKeys = 30
        let file = directory.file("stress.json")
        // Separate handles, one storage: the registry hands every handle on the file the same memory.
        let handles = try (0..<threadCount).map { _ in try DefaultsSuite(fileURL: file) }
        let main = handles[0]

        let everything = ChangeRecorder()
        let perThread = (0..<threadCount).map { _ in ChangeRecorder() }
        var observations = [main.observe { everything.record($0) }]  // watches the file
        for thread in 0..<threadCount {
            let recorder = perThread[thread]
            observations.append(
                handles[(thread + 1) % threadCount].observe(prefix: "t\(thread)-", scope: .thisProcess) {
                    recorder.record($0)
                })
        }
        defer { observations.forEach { $0.cancel() } }

        let (child, _) = try TestAgent.start(["write-many", file.path, "child-", String(childKeys)])
        let failures = Locked<[String]>([])
        let finished = DispatchSemaphore(value: 0)
        for thread in 0..<threadCount {
            let suite = handles[thread]
            let worker = Thread {
                for round in 0..<rounds {
                    for index in 0..<keysPerThread {
                        let key = "t\(thread)-k\(index)", value = round * 100 + index
                        if index % 4 == 3 {
                            suite.performBatchUpdates {
                                suite.set(value, forKey: key)
                                suite.set(thread * 1000 + value, forKey: "shared")
                            }
                        } else {
                            suite.set(value, forKey: key)
                        }
                        // Read your own write; read keys other threads are writing.
                        if suite.value(forKey: key) != .integer(value) {
                            failures.withLock {
                                $0.append("\(key) read \(String(describing: suite.value(forKey: key))), wrote \(value)")
                            }
                        }
                        _ = suite.object(forKey: "shared")
                        _ = suite.values().count
                    }
                }
                suite.removeObject(forKey: "t\(thread)-k0")
                finished.signal()
            }
            worker.start()
        }
        for _ in 0..<threadCount {
            #expect(finished.wait(timeout: .now() + 60) == .success)
        }
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        try main.flush()
        #expect(failures.withLock { $0 } == [])

        var expected: [String: DefaultsValue] = [:]
        for thread in 0..<threadCount {
            for index in 1..<keysPerThread { expected["t\(thread)-k\(index)"] = .integer((rounds - 1) * 100 + index) }
        }
        for index in 0..<childKeys { expected["child-\(index)"] = .integer(index) }
        // The watcher delivers the child's last writes asynchronously.
        #expect(
            eventually {
                main.storedValues.count == expected.count + 1
                    && (try? contentsOnDisk(file)) == main.storedValues.stringKeyed
            })
        let onDisk = try contentsOnDisk(file)
        #expect(onDisk == main.storedValues.stringKeyed)
        #expect(onDisk.filter { $0.key != "shared" } == expected)
        #expect(onDisk["shared"] != nil)
        #expect(!main.hasPendingChanges)

        // Each thread's keys changed on every set and once more when k0 was removed; the observer (on a
        // different handle) heard each change once, from this process, one key at a time.
        for thread in 0..<threadCount {
            let changes = perThread[thread].changes
            #expect(changes.count == rounds * keysPerThread + 1)
            #expect(changes.allSatisfy { $0.origin == .thisProcess && $0.keys.count == 1 })
            #expect(Set(changes.flatMap(\.keys)) == Set((0..<keysPerThread).map { "t\(thread)-k\($0)" }))
        }
        // The cross-process observer heard every key the child wrote, as outside changes, and nothing of
        // this process's keys as outside (no phantom changes from re-reads). Memory takes a change in
        // under the storage's lock and observers hear it once the lock is released, on the watcher's
        // thread: the last child keys can be in memory a moment before the observer has them.
        let childKeyNames = Set((0..<childKeys).map { "child-\($0)" })
        func outsideKeys() -> Set<String> { Set(everything.changes.filter { $0.origin == .outside }.flatMap(\.keys)) }
        #expect(eventually { outsideKeys().isSuperset(of: childKeyNames) })
        #expect(outsideKeys() == childKeyNames)
        let local = Set(everything.changes.filter { $0.origin == .thisProcess }.flatMap(\.keys))
        #expect(
            local
                == Set(expected.keys.filter { $0.hasPrefix("t") }).union(["shared"]).union(
                    (0..<threadCount).map { "t\($0)-k0" }))
    }

    /// A handler that writes when it hears an outside change must not deadlock when that change was found
    /// by a write's re-read (and is delivered on the writing thread) rather than by the watcher. The
    /// watcher thread is held inside another handler meanwhile, so the write is sure to find it first.
    @Test func handlerWritingFromAnOutsideChangeFoundByAWriteDoesNotDeadlock() throws {
        let suite = try DefaultsSuite(name: "reentrant", directory: directory.url)
        suite.set(0, forKey: "local")
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let holdsTheWatcher = suite.observe(keys: ["hold"]) { change in
            guard change.origin == .outside else { return }
            entered.signal()
            release.wait()
        }
        let writesBack = suite.observe(keys: ["remote"]) { change in
            guard change.origin == .outside else { return }
            suite.set(suite.integer(forKey: "remote"), forKey: "ack")
        }
        defer {
            holdsTheWatcher.cancel()
            writesBack.cancel()
        }
        func edit(_ key: String, _ value: Int) throws {
            var edited = suite.storedValues
            edited[ExactKey(key)] = .integer(value)
            try HandEdit.renameOver(suite.fileURL, String(decoding: try SuiteFormat.json.encode(edited), as: UTF8.self))
        }
        for round in 1...3 {
            try edit("hold", round)
            try #require(entered.wait(timeout: .now() + 10) == .success, "the watcher did not deliver the edit")
            try edit("remote", round)
            let finished = DispatchSemaphore(value: 0)
            Thread {
                suite.set(round, forKey: "local")  // re-reads the edit and announces "remote" on this thread
                finished.signal()
            }.start()
            let completed = finished.wait(timeout: .now() + 10) == .success
            release.signal()
            try #require(completed, "round \(round): the write deadlocked")
            #expect(suite.integer(forKey: "ack") == round)
        }
    }

    /// The last cross-process observer going on one thread while a new one arrives on another must never
    /// leave the file unwatched (or watched with no observer).
    @Test func observersComingAndGoingOnTwoThreadsKeepTheWatchRight() throws {
        let suite = try DefaultsSuite(name: "watch-race", directory: directory.url)
        let path = directory.url.path
        for round in 0..<1000 {
            let old = suite.observe { _ in }
            let start = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
            let replacement = Locked<DefaultsObservation?>(nil)
            Thread {
                start.wait()
                old.cancel()
                done.signal()
            }.start()
            Thread {
                start.wait()
                let new = suite.observe { _ in }
                replacement.withLock { $0 = new }
                done.signal()
            }.start()
            start.signal()
            start.signal()
            done.wait()
            done.wait()
            try #require(
                FileWatcher.shared.watchedDirectories.contains(path), "round \(round): an observer but no watch")
            replacement.withLock { $0?.cancel() }
            try #require(
                !FileWatcher.shared.watchedDirectories.contains(path), "round \(round): a watch but no observer")
        }
    }
}

extension DefaultsSuite {
    fileprivate var storedValues: [ExactKey: DefaultsValue] { storage.storedValues }
}
