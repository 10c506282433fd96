import Foundation
import ObservableDefaults

/// `import` and `export`: whole suites to and from JSON or property-list files, or stdin/stdout (`-`).
struct TransferCommands {
    let access: SuiteAccess

    /// `defaults export suite file|-`: the format comes from the file's extension (`.plist`, else JSON); for
    /// `-` it is `--format`, else the suite's own format.
    func export(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(2 ... 2, verb: "export", usage: "defaults export suite file|-")
        let (name, destination) = (arguments[0], arguments[1])
        let suite = try access.openExisting(name)
        let format: SuiteFormat
        if destination == "-" {
            format = access.options.format ?? suite.format
        } else {
            format = SuiteFormat(fileExtension: URL(fileURLWithPath: destination).pathExtension) ?? .json
        }
        let bytes: Data
        do { bytes = try format.encodeSuite(suite.values()) } catch { throw ToolError(error) }
        if destination == "-" {
            Console.writeOut(bytes)
            return
        }
        do {
            try bytes.write(to: URL(fileURLWithPath: destination), options: .atomic)
        } catch {
            throw ToolError("cannot write \(destination): \(error.localizedDescription)")
        }
    }

    /// `defaults import suite file|-`: replaces the suite's contents with the file's (one write; observers
    /// hear only the keys whose value changed). The format comes from the extension; stdin is sniffed
    /// (`<?xml`, `<plist` or `bplist` is a property list, anything else JSON).
    func `import`(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(2 ... 2, verb: "import", usage: "defaults import suite file|-")
        let (name, source) = (arguments[0], arguments[1])
        try access.validate(name)
        let bytes: Data
        let sourceURL: URL
        let format: SuiteFormat
        if source == "-" {
            bytes = FileHandle.standardInput.readDataToEndOfFile()
            sourceURL = URL(fileURLWithPath: "/dev/stdin")
            format = Self.sniff(bytes)
        } else {
            sourceURL = URL(fileURLWithPath: source)
            do {
                bytes = try Data(contentsOf: sourceURL)
            } catch {
                throw ToolError("cannot read \(source): \(error.localizedDescription)")
            }
            format = SuiteFormat(fileExtension: sourceURL.pathExtension) ?? Self.sniff(bytes)
        }
        let contents: [String: DefaultsValue]
        do { contents = try format.decodeSuite(bytes, fileURL: sourceURL) } catch { throw ToolError(error) }
        let suite = try access.openForWriting(name)
        suite.performBatchUpdates {
            for key in suite.storedKeys where contents[key] == nil { suite.removeObject(forKey: key) }
            for (key, value) in contents { suite.set(value, forKey: key) }
        }
        try SuiteAccess.commit(suite)
    }

    static func sniff(_ bytes: Data) -> SuiteFormat {
        let head = String(decoding: bytes.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if head.hasPrefix("bplist") || head.hasPrefix("<?xml") || head.hasPrefix("<plist") || head.hasPrefix("<!DOCTYPE") {
            return .propertyList
        }
        return .json
    }
}
