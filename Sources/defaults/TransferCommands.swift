import Foundation
import ObservableDefaults

/// `import` and `export`: whole suites to and from JSON or property-list files, or stdin/stdout (`-`).
struct TransferCommands {
    let access: SuiteAccess

    /// `defaults export suite file|-`: an XML property list, as on macOS, unless `--format json` or a
    /// `.json` file name asks for JSON (`--format` wins over the extension). `-` is stdout; a file is
    /// written through ``OutputFile``, which never replaces a symlink, FIFO or device.
    func export(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(2...2, verb: "export", usage: "defaults export suite file|-")
        let (name, destination) = (arguments[0], arguments[1])
        let suite = try access.openExisting(name)
        let format =
            access.options.format
            ?? (destination == "-" ? nil : SuiteFormat(fileExtension: URL(fileURLWithPath: destination).pathExtension))
            ?? .propertyList
        let bytes: Data
        // Entries, not `values()`: keys that differ only by Unicode normalisation are two keys.
        do { bytes = try format.encodeSuite(entries: suite.storedEntries()) } catch { throw ToolError(error) }
        if destination == "-" {
            Console.writeOut(bytes)
        } else {
            try OutputFile.write(bytes, to: destination)
        }
    }

    /// `defaults import suite file|-`: replaces the suite's contents with the file's (one write; observers
    /// hear only the keys whose value changed). The format is detected from the content, never from the
    /// name: `bplist` or `<` first (after white space) is a property list, anything else JSON.
    func `import`(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(2...2, verb: "import", usage: "defaults import suite file|-")
        let (name, source) = (arguments[0], arguments[1])
        try access.validate(name)
        let bytes: Data
        let sourceURL: URL
        if source == "-" {
            bytes = FileHandle.standardInput.readDataToEndOfFile()
            sourceURL = URL(fileURLWithPath: "/dev/stdin")
        } else {
            sourceURL = URL(fileURLWithPath: source)
            do {
                bytes = try Data(contentsOf: sourceURL)
            } catch {
                throw ToolError("cannot read \(source): \(error.localizedDescription)")
            }
        }
        let format = Self.sniff(bytes)
        let contents: [(key: String, value: DefaultsValue)]
        do { contents = try format.decodeSuiteEntries(bytes, fileURL: sourceURL) } catch { throw ToolError(error) }
        let suite = try access.openForWriting(name)
        suite.replaceContents(with: contents)
        try SuiteAccess.commit(suite)
    }

    /// The format of an imported file, from its first bytes: a binary (`bplist`) or XML (`<?xml`,
    /// `<plist`, `<!DOCTYPE`: any `<`) property list, else JSON.
    static func sniff(_ bytes: Data) -> SuiteFormat {
        let head = String(decoding: bytes.prefix(64), as: UTF8.self).drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        return head.hasPrefix("bplist") || head.hasPrefix("<") ? .propertyList : .json
    }
}

extension DefaultsSuite {
    /// Makes `contents` the suite's whole contents in one batch (one write); keys whose value does not
    /// change are not announced to observers. Keys compare by their bytes, as the suite compares them.
    func replaceContents(with contents: [(key: String, value: DefaultsValue)]) {
        let kept = Set(contents.map { Array($0.key.utf8) })
        performBatchUpdates {
            for key in storedKeys where !kept.contains(Array(key.utf8)) { removeObject(forKey: key) }
            for (key, value) in contents { set(value, forKey: key) }
        }
    }
}
