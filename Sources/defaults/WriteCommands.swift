import Foundation
import ObservableDefaults

/// `write`, `delete`, `rename`: verbs that change a suite. Each writes the file once, under the library's
/// cross-process lock, and fails (leaving the file untouched) when the file does not parse.
struct WriteCommands {
    let access: SuiteAccess

    /// Where the arguments given after `--` start (they are never options, so a key may begin with `-`).
    let literalFrom: Int

    /// `defaults write suite key [type flag] value...`, or `defaults write suite '{ ... }'`.
    func write(_ arguments: [String]) throws(ToolError) {
        if let name = arguments.first { try access.validate(name) }
        if arguments.count == 2 { return try replaceDomain(arguments[0], with: arguments[1]) }
        guard arguments.count >= 3 else {
            throw .usage("missing arguments; usage: defaults write suite key [type flag] value", verb: "write")
        }
        let (name, key) = (arguments[0], arguments[1])
        if WriteAction.looksLikeFlag(key) && literalFrom > 1 {
            throw .usage(
                "'\(key)' is where the key goes, and it looks like an option; usage: defaults write suite key [type flag] value"
                    + " (for a key that begins with '-', write: defaults write \(name) -- \(key) ...)", verb: "write")
        }
        let action: WriteAction
        do throws(ToolError) {
            action = try WriteAction(arguments: Array(arguments.dropFirst(2)))
        } catch  where error.exitCode == 1 {
            throw ToolError("\(error.message) (key '\(key)' of suite '\(name)'); nothing was written")
        }
        let suite = try access.openForWriting(name)
        let newValue: DefaultsValue
        switch action {
        case .set(let value):
            newValue = value
        case .arrayAdd(let items):
            switch suite.storedValue(forKey: key) {
            case nil: newValue = .array(items)
            case .array(let existing)?: newValue = .array(existing + items)
            case let other?:
                throw ToolError(
                    "cannot add to key '\(key)' in suite '\(name)': it holds a \(other.typeName), not an array")
            }
        case .dictAdd(let entries):
            switch suite.storedValue(forKey: key) {
            case nil: newValue = .dictionary(entries)
            case .dictionary(let existing)?: newValue = .dictionary(existing.merging(entries) { _, new in new })
            case let other?:
                throw ToolError(
                    "cannot add to key '\(key)' in suite '\(name)': it holds a \(other.typeName), not a dictionary")
            }
        }
        suite.set(newValue, forKey: key)
        try SuiteAccess.commit(suite)
    }

    /// `defaults write suite '{ key = value; ... }'` (or an XML `<dict>`): the dictionary becomes the whole
    /// contents of the suite, as on macOS, in one write.
    private func replaceDomain(_ name: String, with text: String) throws(ToolError) {
        let value: DefaultsValue
        do throws(ToolError) {
            value = try PropertyListText.value(of: text)
        } catch {
            throw ToolError("\(error.message) (suite '\(name)'); nothing was written")
        }
        guard case .dictionary(let contents) = value else {
            throw .usage(
                "missing arguments; usage: defaults write suite key [type flag] value, "
                    + "or defaults write suite '{ key = value; }' to replace the whole suite", verb: "write")
        }
        let suite = try access.openForWriting(name)
        suite.replaceContents(with: contents.map { ($0.key, $0.value) })
        try SuiteAccess.commit(suite)
    }

    /// `defaults delete suite [key]`: removes one key, or the whole suite file.
    func delete(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(1...2, verb: "delete", usage: "defaults delete suite [key]")
        let name = arguments[0]
        guard arguments.count == 2 else {
            let domain = try access.resolve(name)
            guard let file = domain.existing else { throw domain.missingError }
            try access.checkLayerWritable()
            if unlink(file.path) != 0 {
                throw ToolError("cannot delete \(file.path): \(String(cString: strerror(errno)))")
            }
            return
        }
        let key = arguments[1]
        try access.checkLayerWritable()
        let suite = try access.openExisting(name)
        guard suite.storedValue(forKey: key) != nil else {
            throw ToolError("Key '\(key)' does not exist in suite '\(name)' (\(suite.fileURL.path))")
        }
        suite.removeObject(forKey: key)
        try SuiteAccess.commit(suite)
    }

    /// `defaults rename suite old new`: moves a value to a new key in one write.
    func rename(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(3...3, verb: "rename", usage: "defaults rename suite old-key new-key")
        let (name, old, new) = (arguments[0], arguments[1], arguments[2])
        try access.checkLayerWritable()
        let suite = try access.openExisting(name)
        guard let value = suite.storedValue(forKey: old) else {
            throw ToolError("Key '\(old)' does not exist in suite '\(name)' (\(suite.fileURL.path))")
        }
        guard old != new else { return }
        suite.performBatchUpdates {
            suite.set(value, forKey: new)
            suite.removeObject(forKey: old)
        }
        try SuiteAccess.commit(suite)
    }
}
