import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Real child processes writing the real file; the observer in this process must hear exactly the keys
/// they changed, as outside changes.
@Suite struct CrossProcessTests {
    let directory = TemporaryDirectory()

    @Test func childWritesArriveAsExactlyTheChangedKeysFromOutside() throws {
        let suite = try DefaultsSuite(name: "child", directory: directory.url)
        suite.set(1, forKey: "untouched")
        let recorder = ChangeRecorder()
        let observation = suite.observe { recorder.record($0) }
        defer { observation.cancel() }

        #expect(try TestAgent.run(["set", suite.fileURL.path, "host", "string:example.org", "port", "int:8080"]) == 0)
        #expect(recorder.waitFor(key: "port"))
        #expect(try TestAgent.run(["set", suite.fileURL.path, "marker", "int:1"]) == 0)
        #expect(recorder.waitFor(key: "marker"))

        let before = recorder.changes(before: "marker")
        #expect(before == [DefaultsChange(keys: ["host", "port"], origin: .outside)])
        #expect(suite.string(forKey: "host") == "example.org")
        #expect(suite.integer(forKey: "port") == 8080)
        #expect(suite.integer(forKey: "untouched") == 1)
    }

    @Test func thisProcessScopeHearsNothingFromOutside() throws {
        let suite = try DefaultsSuite(name: "scoped", directory: directory.url)
        let local = ChangeRecorder()
        let everything = ChangeRecorder()
        let localObservation = suite.observe(scope: .thisProcess) { local.record($0) }
        let allObservation = suite.observe { everything.record($0) }
        defer { localObservation.cancel(); allObservation.cancel() }

        #expect(try TestAgent.run(["set", suite.fileURL.path, "outside", "int:1"]) == 0)
        #expect(everything.waitFor(key: "outside"))
        suite.set(2, forKey: "inside")
        #expect(local.changes == [DefaultsChange(keys: ["inside"], origin: .thisProcess)])
        #expect(
            everything.changes == [
                DefaultsChange(keys: ["outside"], origin: .outside),
                DefaultsChange(keys: ["inside"], origin: .thisProcess)
            ])
    }

    @Test func concurrentWritersOfDistinctKeysLoseNothing() throws {
        let file = directory.file("contended.json")
        let processes = 4
        let writes = 40
        let statuses = try TestAgent.runTogether(
            (0..<processes).map { ["write-many", file.path, "p\($0)-", String(writes)] })
        #expect(statuses == Array(repeating: 0, count: processes))
        let contents = try contentsOnDisk(file)
        #expect(contents.count == processes * writes)
        for index in 0..<processes {
            for write in 0..<writes {
                #expect(contents["p\(index)-\(write)"] == .integer(write))
            }
        }
    }

    @Test func writesFromThisProcessKeepKeysOtherProcessesWrote() throws {
        let suite = try DefaultsSuite(name: "merge", directory: directory.url)
        suite.set("mine", forKey: "local")
        #expect(try TestAgent.run(["set", suite.fileURL.path, "remote", "string:theirs"]) == 0)
        // No observer: this process has not seen the remote write, yet its next write must keep it.
        suite.set("mine, again", forKey: "local")
        #expect(try contentsOnDisk(suite.fileURL) == ["local": .string("mine, again"), "remote": .string("theirs")])
        #expect(suite.string(forKey: "remote") == "theirs", "the re-read during the write brought it into memory")
    }

    @Test func writerKilledMidLoopNeverLeavesAnUnparseableFile() throws {
        let file = directory.file("killed.json")
        for round in 0..<12 {
            let (child, output) = try TestAgent.start(["write-forever", file.path, "counter"])
            // Wait for the child to be writing, then kill it at a different moment each round.
            _ = output.fileHandleForReading.availableData
            usleep(UInt32(1000 + round * 1700))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            #expect(child.terminationReason == .uncaughtSignal)
            let contents = try contentsOnDisk(file)
            guard case .integer(let counter)? = contents["counter"] else {
                Issue.record("round \(round): counter missing from \(contents)")
                continue
            }
            #expect(counter >= 0)
        }
        // A killed writer can leave its temporary file behind; the next process to write in the
        // directory removes (in the background) temporary files of writers that are gone.
        let suite = try DefaultsSuite(fileURL: file)
        suite.set(1, forKey: "after")
        // Temporary files are written in the hidden subdirectory (see SuiteFileTemporaryDirectory), so both are checked.
        let hidden = directory.file(SuiteFileTemporaryDirectory.name).path
        #expect(
            eventually {
                [directory.url.path, hidden].allSatisfy {
                    ((try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? []).filter { $0.hasSuffix(".tmp") }
                        == []
                }
            })
    }
}
