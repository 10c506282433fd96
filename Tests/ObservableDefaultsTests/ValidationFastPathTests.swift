import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Writes skip ``SuiteFormat/validate(_:forKey:fileURL:)`` for values ``SuiteFormat/acceptsUnderAnyKey(_:)``
/// says pass; that must never let through a value, or a key, the full check refuses.
@Suite struct ValidationFastPathTests {
    static let values: [DefaultsValue] = [
        .integer(0), .integer(.min), .bool(true), .data(Data([0, 1, 0xFF])), .string(""), .string("plain"),
        .string("control \u{1} character"), .string("\u{FFFE}"), .double(1.5), .double(.nan), .double(.infinity),
        .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: 1e15)),
        .array([.integer(1), .string("\u{1}")]), .dictionary(["a": .double(.nan)]), .dictionary(["\u{1}": .integer(1)])
    ]
    static let keys = ["count", "", "control \u{1} key", "\u{FFFF}"]

    @Test(arguments: SuiteFormat.allCases)
    func whatTheFastPathPassesTheFullCheckPasses(format: SuiteFormat) {
        var skipped = 0
        for value in Self.values where format.acceptsUnderAnyKey(value) {
            skipped += 1
            for key in Self.keys {
                #expect(throws: Never.self, "\(value) under \(key.debugDescription)") {
                    try format.validate(value, forKey: key, fileURL: nil)
                }
            }
        }
        // JSON skips numbers, booleans, data and strings; a property list checks every key, so nothing.
        #expect(skipped == (format == .json ? 8 : 0))
    }

    /// A value the fast path does not pass still meets the full check: refused with its key named.
    @Test func aRefusedValueIsStillReportedThroughTheSuite() throws {
        let directory = TemporaryDirectory()
        let suite = try DefaultsSuite(fileURL: directory.file("refused.json"))
        let errors = Locked<[DefaultsError]>([])
        let token = suite.observeErrors { error in errors.withLock { $0.append(error) } }
        defer { token.cancel() }
        suite.set(Double.nan, forKey: "ratio")
        #expect(suite.value(forKey: "ratio") == nil)
        #expect(errors.withLock { $0.first?.kind } == .unsupportedValue)
        #expect(errors.withLock { $0.first?.key } == "ratio")
    }
}
