import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

@Suite struct SuiteBasicsTests {
    let directory = TemporaryDirectory()

    @Test func typedGettersReadWhatWasSet() throws {
        let suite = try DefaultsSuite(name: "typed", directory: directory.url)
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        suite.set("hello", forKey: "string")
        suite.set(42, forKey: "int")
        suite.set(2.5, forKey: "double")
        suite.set(Float(1.5), forKey: "float")
        suite.set(true, forKey: "bool")
        suite.set(Data([1, 2, 3]), forKey: "data")
        suite.set(date, forKey: "date")
        suite.set(URL(string: "https://example.com/a?b=c")!, forKey: "url")
        suite.set(["a", "b"], forKey: "strings")
        suite.set(["k": 1], forKey: "dict")

        #expect(suite.string(forKey: "string") == "hello")
        #expect(suite.integer(forKey: "int") == 42)
        #expect(suite.double(forKey: "double") == 2.5)
        #expect(suite.float(forKey: "float") == 1.5)
        #expect(suite.bool(forKey: "bool"))
        #expect(suite.data(forKey: "data") == Data([1, 2, 3]))
        #expect(suite.date(forKey: "date") == date)
        #expect(suite.url(forKey: "url") == URL(string: "https://example.com/a?b=c"))
        #expect(suite.stringArray(forKey: "strings") == ["a", "b"])
        #expect(suite.dictionary(forKey: "dict")?["k"] as? Int == 1)
        #expect(suite.array(forKey: "strings")?.count == 2)
        #expect(suite.object(forKey: "int") as? Int == 42)

        // Missing keys read as the UserDefaults zero values.
        #expect(suite.string(forKey: "missing") == nil)
        #expect(suite.integer(forKey: "missing") == 0)
        #expect(suite.bool(forKey: "missing") == false)
        #expect(suite.double(forKey: "missing") == 0)
    }

    @Test func setIsWrittenThroughBeforeItReturns() throws {
        let suite = try DefaultsSuite(name: "through", directory: directory.url)
        suite.set(7, forKey: "workers")
        #expect(try contentsOnDisk(suite.fileURL) == ["workers": .integer(7)])
        suite.removeObject(forKey: "workers")
        #expect(try contentsOnDisk(suite.fileURL) == [:])
    }

    @Test func jsonFileIsPrettyAndSorted() throws {
        let suite = try DefaultsSuite(name: "pretty", directory: directory.url)
        suite.performBatchUpdates {
            suite.set("b", forKey: "zeta")
            suite.set(5.0, forKey: "alpha")
        }
        let text = try String(contentsOf: suite.fileURL, encoding: .utf8)
        #expect(text == "{\n  \"alpha\": 5.0,\n  \"zeta\": \"b\"\n}\n")
    }

    @Test func registeredDefaultsAreFallbackOnlyAndNeverWritten() throws {
        let suite = try DefaultsSuite(name: "registered", directory: directory.url)
        suite.register(defaults: ["level": "info", "workers": 4])
        #expect(suite.string(forKey: "level") == "info")
        #expect(suite.storedValue(forKey: "level") == nil)
        suite.set("debug", forKey: "level")
        #expect(suite.string(forKey: "level") == "debug")
        suite.removeObject(forKey: "level")
        #expect(suite.string(forKey: "level") == "info")
        #expect(try contentsOnDisk(suite.fileURL) == [:])
        #expect(suite.dictionaryRepresentation()["workers"] as? Int == 4)
    }

    @Test func unsupportedRegisteredObjectsAreSkippedAndReportedNamingTheFile() throws {
        let suite = try DefaultsSuite(name: "registered-odd", directory: directory.url)
        let errors = ErrorRecorder()
        let observation = suite.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        suite.register(defaults: ["ok": 3, "odd": NSObject()])
        #expect(suite.integer(forKey: "ok") == 3 && suite.value(forKey: "odd") == nil)
        #expect(errors.errors.count == 1)
        #expect(errors.errors.first?.kind == .unsupportedValue && errors.errors.first?.key == "odd")
        #expect(errors.errors.first?.fileURL == suite.fileURL)
        #expect(errors.errors.first?.message.contains("cannot register a default of type NSObject") == true)
    }

    @Test func wrongTypedValueFallsBackToRegisteredDefaultForThatKeyOnly() throws {
        let file = directory.file("typed.json")
        try Data(#"{"workers": "many", "level": "warn"}"#.utf8).write(to: file)
        let suite = try DefaultsSuite(fileURL: file)
        suite.register(defaults: ["workers": 4, "level": "info"])
        #expect(suite.value(Int.self, forKey: "workers") == 4)
        #expect(suite.integer(forKey: "workers") == 4)
        #expect(suite.value(String.self, forKey: "level") == "warn")
    }

    @Test func everyHandleOnAFileSharesOneStorage() throws {
        let first = try DefaultsSuite(name: "shared", directory: directory.url)
        let second = try DefaultsSuite(fileURL: directory.file("shared.json"))
        first.set("x", forKey: "k")
        #expect(second.string(forKey: "k") == "x")
        #expect(first.storage === second.storage)
    }

    @Test func batchUpdatesWriteOnceAtTheEnd() throws {
        let suite = try DefaultsSuite(name: "batch", directory: directory.url)
        suite.performBatchUpdates {
            suite.set(1, forKey: "a")
            suite.set(2, forKey: "b")
            #expect(suite.integer(forKey: "a") == 1, "memory sees the change at once")
            #expect(!FileManager.default.fileExists(atPath: suite.fileURL.path), "nothing written inside the batch")
            #expect(suite.hasPendingChanges)
        }
        #expect(try contentsOnDisk(suite.fileURL) == ["a": .integer(1), "b": .integer(2)])
        #expect(!suite.hasPendingChanges)
    }

    @Test func synchronizedWritesAreSharedByHandlesAndLandInTheFile() throws {
        let suite = try DefaultsSuite(name: "durable", directory: directory.url)
        let other = try DefaultsSuite(name: "durable", directory: directory.url)
        #expect(!suite.synchronizesToDisk)
        suite.synchronizesToDisk = true
        #expect(other.synchronizesToDisk)
        other.set("fsynced", forKey: "k")
        #expect(try contentsOnDisk(suite.fileURL) == ["k": .string("fsynced")])
    }

    @Test func removeAllClearsTheFile() throws {
        let suite = try DefaultsSuite(name: "clear", directory: directory.url)
        suite.set(1, forKey: "a")
        suite.set(2, forKey: "b")
        suite.removeAll()
        #expect(suite.storedKeys.isEmpty)
        #expect(try contentsOnDisk(suite.fileURL) == [:])
    }

    @Test func propertyListSuitesAreWrittenAsXML() throws {
        let suite = try DefaultsSuite(name: "list", directory: directory.url, format: .propertyList)
        suite.set(5.0, forKey: "ratio")
        suite.set(3, forKey: "count")
        #expect(suite.fileURL.lastPathComponent == "list.plist")
        let text = try String(contentsOf: suite.fileURL, encoding: .utf8)
        #expect(text.contains("<real>5"))
        #expect(text.contains("<integer>3</integer>"))
        #expect(try contentsOnDisk(suite.fileURL, format: .propertyList) == ["ratio": .double(5), "count": .integer(3)])
        // Opening by name finds the existing .plist file.
        let reopened = try DefaultsSuite(name: "list", directory: directory.url)
        #expect(reopened.format == .propertyList)
    }

    @Test func unsupportedObjectIsReportedNotStored() throws {
        let suite = try DefaultsSuite(name: "unsupported", directory: directory.url)
        let recorder = ErrorRecorder()
        let observation = suite.observeErrors { recorder.record($0) }
        suite.set(NSObject(), forKey: "object")
        #expect(suite.object(forKey: "object") == nil)
        #expect(recorder.errors.first?.kind == .unsupportedValue)
        #expect(recorder.errors.first?.key == "object")
        #expect(suite.lastError == recorder.errors.first)
        observation.cancel()
    }
}
