import Foundation

extension SuiteFormat {
    /// The members of `previous` and `current` and what changed between them (see ``SuiteIndex``).
    struct Reread {
        /// The keys whose value changed: exactly those a full parse and a diff find.
        var changed: [ExactKey]
        /// The members of the current bytes, for the next re-read.
        var members: [SuiteIndex.Member]
    }

    /// The re-read that parses only the members whose bytes changed: brings `values` (the contents of
    /// `previous`) to those of `current`, or returns `nil` with `values` as they were, and the caller
    /// parses the whole file (also a file that does not parse, a file of another kind — a binary property
    /// list — or an XML property list in a form the member scan does not delimit: comments, CDATA,
    /// UTF-16).
    /// - Parameters:
    ///   - previousMembers: the members of `previous`, when a re-read found them.
    ///   - entries: the writer's entries, when `previous` is what this process wrote (their fragments
    ///     give the members without a scan).
    ///   - spellings: JSON's number spellings of `previous`, brought to those of `current`.
    func reread(
        previous: UnsafeBufferPointer<UInt8>, previousMembers known: [SuiteIndex.Member]?, entries: [Entry]?,
        values: inout [ExactKey: DefaultsValue], spellings: inout JSONNumberSpellings,
        current: UnsafeBufferPointer<UInt8>
    ) -> Reread? {
        switch self {
        case .json:
            guard
                let previousMembers = known
                    ?? entries.flatMap({ JSONSuiteIndex.members(ofWritten: previous, entries: $0) })
                    ?? JSONSuiteIndex.scan(previous),
                previousMembers.count == values.count,
                let scan = JSONSuiteIndex.scan(current, previous: previous, previousMembers: previousMembers),
                let changed = JSONSuiteIndex.reread(
                    previousBytes: previous, previousMembers: previousMembers, values: &values, spellings: &spellings,
                    newBytes: current, newMembers: scan.members, sameAtStart: scan.sameAtStart,
                    sameAtEnd: scan.sameAtEnd)
            else { return nil }
            return Reread(changed: changed, members: scan.members)
        case .propertyList:
            guard
                let previousMembers = known
                    ?? entries.flatMap({ PropertyListXMLSuiteIndex.members(ofWritten: previous, entries: $0) })
                    ?? Self.membersOfReadPropertyList(previous),
                previousMembers.count == values.count,
                let scan = PropertyListXMLSuiteIndex.scan(
                    current, previous: previous, previousMembers: previousMembers),
                let changed = PropertyListXMLSuiteIndex.reread(
                    previousBytes: previous, previousMembers: previousMembers, values: &values,
                    newBytes: current, newMembers: scan.members, sameAtStart: scan.sameAtStart,
                    sameAtEnd: scan.sameAtEnd)
            else { return nil }
            return Reread(changed: changed, members: scan.members)
        }
    }

    /// The members of a property list read before, when it is XML that ``PropertyListXMLReader`` reads and
    /// the member scan delimits (a binary property list is not). Costs one parse, once per file version read
    /// with a full parse.
    private static func membersOfReadPropertyList(_ bytes: UnsafeBufferPointer<UInt8>) -> [SuiteIndex.Member]? {
        guard (try? PropertyListXMLReader.parseSuite(Data(buffer: bytes))) != nil else { return nil }
        return PropertyListXMLSuiteIndex.scan(bytes)
    }
}
