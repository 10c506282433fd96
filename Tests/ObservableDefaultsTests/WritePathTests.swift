import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The store's write path keeps the file's entries sorted between writes and changes them in place;
/// these tests hold it to the plain encoder's bytes and to its rollback when a write fails.
@Suite struct WritePathTests {
    let directory = TemporaryDirectory()

    /// After every kind of change (insert anywhere in the order, overwrite, a canonically equivalent key,
    /// removal, nested values, a re-read of an outside edit) the file is byte for byte what encoding
    /// its contents afresh gives, and equals memory.
    @Test(arguments: SuiteFormat.allCases) func incrementalWritesMatchAFreshEncoding(format: SuiteFormat) throws {
        let suite = try DefaultsSuite(name: "incremental", directory: directory.url, format: format)
        func check(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let bytes = try Data(contentsOf: suite.fileURL)
            let decoded = try format.decode(bytes, fileURL: suite.fileURL)
            #expect(bytes == (try format.encode(decoded)), "\(step)", sourceLocation: sourceLocation)
            #expect(decoded == suite.storage.storedValues, "\(step)", sourceLocation: sourceLocation)
        }
        let keys = ["m", "b", "z", "a", "Z", "", "key10", "key9", "ä", "é", "é2", "😀", "a b", "quote\"d", "x<y&z"]
        for (index, key) in keys.enumerated() {
            suite.set(index, forKey: key)
            try check("insert \(key)")
        }
        suite.set("again", forKey: "a")
        try check("overwrite")
        // Canonically equivalent to "é" but other bytes: another key (keys compare by bytes, issue 13 item 7).
        suite.set(true, forKey: "e\u{301}")
        try check("canonically equal key")
        #expect(suite.storage.storedValues.count == keys.count + 1)
        #expect(suite.value(forKey: "\u{E9}") == .integer(keys.firstIndex(of: "\u{E9}")!))
        suite.removeObject(forKey: "m")
        suite.removeObject(forKey: "")
        suite.removeObject(forKey: "not there")
        try check("removals")
        suite.set(
            DefaultsValue.dictionary([
                "z": .integer(1), "a": .array([.bool(true), .dictionary([:])]),
                "m": .dictionary(["b": .double(1.5), "a": .string("s")])
            ]), forKey: "nested")
        try check("nested")
        suite.performBatchUpdates {
            suite.set(1, forKey: "batch-b")
            suite.set(2, forKey: "batch-a")
            suite.removeObject(forKey: "z")
        }
        try check("batch")
        var edited = try format.decode(try Data(contentsOf: suite.fileURL), fileURL: suite.fileURL)
        edited["outside"] = .integer(1)
        edited.removeValue(forKey: "b")
        try HandEdit.renameOver(suite.fileURL, String(decoding: try format.encode(edited), as: UTF8.self))
        suite.set(3, forKey: "after-edit")
        try check("re-read of an outside edit")
        #expect(suite.integer(forKey: "outside") == 1)
        #expect(suite.storedValue(forKey: "b") == nil)
    }

    /// A write that fails after the file's contents were changed in place puts them back: the failed
    /// changes stay pending, and the contents as last read are unchanged.
    @Test func failedWriteRollsTheContentsBack() throws {
        // A read-only file is read, changed in memory, then refused at the replacement (for root too):
        // the write fails in the middle, after the changes were applied to the contents.
        let file = directory.file("rollback.json")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(#"{"a": 1, "c": 3}"#.utf8)))
        let suite = try DefaultsSuite(fileURL: file)
        chmod(file.path, 0o400)
        suite.set(2, forKey: "b")
        suite.set(5, forKey: "a")
        suite.removeObject(forKey: "c")
        #expect(suite.lastError?.errorNumber == EACCES)
        #expect(suite.hasPendingChanges)
        #expect(suite.storage.fileContents == ["a": .integer(1), "c": .integer(3)])
        #expect(suite.storage.storedValues == ["a": .integer(5), "b": .integer(2)])
        #expect(try contentsOnDisk(file) == ["a": .integer(1), "c": .integer(3)])
        #expect(throws: DefaultsError.self) { try suite.flush() }
        #expect(suite.storage.fileContents == ["a": .integer(1), "c": .integer(3)])
    }
}
