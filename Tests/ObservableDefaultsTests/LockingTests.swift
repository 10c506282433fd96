import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The writers' lock under attack and contention: removed or replaced while writers run, held by a
/// process that does not let go, and not held at all by idle suites.
@Suite struct LockingTests {
    let directory = TemporaryDirectory()

    /// Reads a line from a child's standard output.
    private func readLine(_ pipe: Pipe) -> String {
        var line = Data()
        while true {
            let byte = pipe.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Starts a test agent that takes `suite`'s lock file and holds it until its standard input (`input`) is
    /// closed; returns once the agent says it holds the lock.
    private func startLockHolder(for suite: DefaultsSuite) throws -> (holder: Process, input: Pipe) {
        let holder = Process()
        holder.executableURL = TestAgent.executableURL
        holder.arguments = ["hold-lock", suite.fileURL.path]
        let output = Pipe(), input = Pipe()
        holder.standardOutput = output
        holder.standardInput = input
        try holder.run()
        #expect(readLine(output) == "locked")
        return (holder, input)
    }

    @Test func lockFileRemovedAndReplacedWhileWritersRunLosesNoKey() throws {
        let file = directory.file("churned.json")
        let (churner, churnerOutput) = try TestAgent.start(["churn-lock", file.path, "1000"])
        // SIGKILL: the agent inherits a signal mask in which SIGTERM is blocked.
        defer { kill(churner.processIdentifier, SIGKILL); churner.waitUntilExit() }
        #expect(readLine(churnerOutput) == "ready")
        let processes = 4
        let writes = 150
        let writers = try (0..<processes).map { index in
            try TestAgent.start(["write-many", file.path, "p\(index)-", String(writes)]).0
        }
        for writer in writers {
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)
        }
        let contents = try contentsOnDisk(file)
        var missing: [String] = []
        for index in 0..<processes {
            for write in 0..<writes where contents["p\(index)-\(write)"] != .integer(write) {
                missing.append("p\(index)-\(write)")
            }
        }
        #expect(missing.isEmpty, "\(missing.count) of \(processes * writes) keys lost: \(missing.prefix(10))")
    }

    /// The holder is named on a busy machine too: with 1,500 other locks in `/proc/locks` before its line
    /// (a whole read; the first page of it names 76).
    @Test func theHolderIsNamedAmongManyOtherLocks() throws {
        let others = try (0..<1_500).map { index -> Int32 in
            let descriptor = open(directory.file("other-\(index)").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else {
                throw EtcdTestError("cannot lock a file: \(String(cString: strerror(errno)))")
            }
            return descriptor
        }
        defer { others.forEach { close($0) } }
        let suite = try DefaultsSuite(name: "busy", directory: directory.url)
        suite.lockWaitLimit = .milliseconds(200)
        let errors = ErrorRecorder()
        let observation = suite.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        let (holder, input) = try startLockHolder(for: suite)
        defer {
            try? input.fileHandleForWriting.close()
            holder.waitUntilExit()
        }
        suite.set(2, forKey: "a")
        let error = try #require(errors.errors.first)
        #expect(error.message.contains("held by process \(holder.processIdentifier)"), "\(error.message)")
    }

    @Test func heldLockTimesOutReportsTheHolderAndTheChangeLandsOnItsOwnAfterRelease() throws {
        let suite = try DefaultsSuite(name: "held", directory: directory.url)
        suite.set(1, forKey: "a")
        suite.lockWaitLimit = .milliseconds(200)
        let errors = ErrorRecorder()
        let errorObservation = suite.observeErrors { errors.record($0) }
        let recoveries = Locked(0)
        let recoveryObservation = suite.observeWriteRecovery { recoveries.withLock { $0 += 1 } }
        defer { errorObservation.cancel(); recoveryObservation.cancel() }

        let (holder, input) = try startLockHolder(for: suite)
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }; holder.waitUntilExit() }

        let lockOpens = try FileOpenCounter(directory.file(".held.json.lock"))
        suite.set(2, forKey: "a")
        // The write gave up: it returned while the holder still holds the lock (it lets go only when its
        // input is closed, below).
        #expect(holder.isRunning)
        #expect(suite.integer(forKey: "a") == 2)
        #expect(suite.hasPendingChanges)
        #expect(try contentsOnDisk(suite.fileURL) == ["a": .integer(1)])
        let error = try #require(errors.errors.first)
        #expect(errors.errors.count == 1, "\(errors.errors)")
        #expect(error.kind == .fileSystem)
        #expect(error.message.contains("/.held.json.lock"))
        #expect(error.message.contains("held by process \(holder.processIdentifier)"))
        #expect(suite.writeError?.errorNumber == error.errorNumber)
        #expect(suite.currentErrors.map(\.message) == [error.message], "a late error observer must hear it")
        #expect(recoveries.withLock { $0 } == 0)

        // Retries keep failing while the lock is held, and are not reported again. Every attempt opens the
        // lock file, and the next retry is scheduled only once the last one's failure was handled: the fourth
        // open from the write on proves that two retries have failed and been handled.
        #expect(lockOpens.waitFor(opens: 4), "no retry while the lock was held: \(lockOpens.opens) attempts")
        #expect(holder.isRunning)
        #expect(errors.errors.count == 1, "\(errors.errors)")
        #expect(try contentsOnDisk(suite.fileURL) == ["a": .integer(1)])

        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        #expect(eventually { (try? contentsOnDisk(suite.fileURL)) == ["a": .integer(2)] })
        #expect(eventually { recoveries.withLock { $0 } == 1 })
        #expect(suite.writeError == nil)
        #expect(suite.currentErrors.isEmpty)
        #expect(!suite.hasPendingChanges)
        #expect(errors.errors.count == 1, "\(errors.errors)")
    }

    /// A holder that takes the lock again and again, letting go only for moments, but replaces the file by a copy (or,
    /// for the directory's commit lock, a file in the directory) each time: the suite is busy, not stuck.
    /// A polling waiter keeps missing the gaps; it must wait on without reporting a timeout, however much
    /// longer than the limit that takes, and its change must land with the holder's.
    @Test(arguments: ["file", "directory"])
    func aWriterWaitsForBusyHoldersThatMakeProgress(lock: String) throws {
        let suite = try DefaultsSuite(name: "busy-\(lock)", directory: directory.url)
        suite.lockWaitLimit = .milliseconds(400)
        let errors = ErrorRecorder()
        let errorObservation = suite.observeErrors { errors.record($0) }
        defer { errorObservation.cancel() }
        let (holder, output) = try TestAgent.start(["keep-lock-busy", suite.fileURL.path, "2", lock])
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }; holder.waitUntilExit() }
        #expect(readLine(output) == "locked")

        suite.set(1, forKey: "mine")
        #expect(errors.errors.isEmpty, "\(errors.errors)")
        #expect(suite.writeError == nil)
        #expect(!suite.hasPendingChanges)
        #expect(readLine(output) == "done")
        holder.waitUntilExit()
        #expect(holder.terminationStatus == 0)
        #expect(try contentsOnDisk(suite.fileURL) == ["mine": .integer(1)])
    }

    /// Progress is the suite's own: another suite written without pause in the same directory does not keep
    /// a writer waiting for a holder of this suite's lock that gets nothing done.
    @Test func aStuckHolderTimesOutWhileAnotherSuiteInTheDirectoryIsBusy() throws {
        let suite = try DefaultsSuite(name: "stuck", directory: directory.url)
        suite.lockWaitLimit = .milliseconds(200)
        let (busy, busyOutput) = try TestAgent.start(["write-forever", directory.file("busy.json").path, "counter"])
        defer { kill(busy.processIdentifier, SIGKILL); busy.waitUntilExit() }
        #expect(readLine(busyOutput) == "ready")
        let (holder, _) = try startLockHolder(for: suite)
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }; holder.waitUntilExit() }

        // On another thread, so that a write waiting on the busy directory cannot hang the test.
        let returned = Locked(false)
        DispatchQueue.global().async {
            suite.set(1, forKey: "a")
            returned.withLock { $0 = true }
        }
        // It gives up while the other suite is still being written (the writer runs until killed, below).
        #expect(
            eventually(timeout: .seconds(30)) { returned.withLock { $0 } },
            "set still blocked while the other suite was busy")
        #expect(busy.isRunning)
        kill(busy.processIdentifier, SIGKILL)
        #expect(eventually { returned.withLock { $0 } })
        #expect(suite.hasPendingChanges)
        #expect(
            suite.writeError?.message.contains("held by process \(holder.processIdentifier)") == true,
            "\(String(describing: suite.writeError))")
    }

    @Test func idleSuitesHoldNoDescriptors() throws {
        // 300 suites, each written and kept open, in a process allowed 64 descriptors.
        let (child, output) = try TestAgent.start(["many-suites", directory.url.path, "300", "64"])
        let line = readLine(output)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0)
        #expect(line == "wrote 300")
        #expect(try contentsOnDisk(directory.file("suite299.json")) == ["index": .integer(299)])
    }

    @Test func openingAndWritingSuitesLeavesNoDescriptorOpen() throws {
        let suite = try DefaultsSuite(name: "descriptors", directory: directory.url)
        suite.set(1, forKey: "a")
        let lockPath = directory.file(".descriptors.json.lock").path
        let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == lockPath
        }
        #expect(open.isEmpty)
    }
}
