import Foundation

/// One value as the JSON text a cloud server holds: exactly the text the value has in a JSON suite file
/// (pretty-printed, sorted keys), so `etcdctl get` shows what `cat settings.json` would.
enum CloudValueText {
    /// The value's JSON text (dates and data as their JSON-suite strings).
    static func encode(_ value: DefaultsValue) -> Data {
        // The suite writer is the one JSON writer: write a one-member suite and keep its member's text,
        // one level less indented (strings never hold a raw newline, so lines are safe to cut).
        let suite = String(decoding: JSONWriter.encodeSuite(["v": value]), as: UTF8.self)
        var lines = suite.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()  // "{"
        while let last = lines.last, last.isEmpty || last == "}" { lines.removeLast() }
        var result: [Substring] = []
        for (index, line) in lines.enumerated() {
            result.append(index == 0 ? line.dropFirst(#"  "v": "#.count) : line.dropFirst(2))
        }
        return Data(result.joined(separator: "\n").utf8)
    }

    /// The value of JSON text `data` held under `key`, normalised as a JSON suite holds it.
    static func decode(_ data: Data, key: String) throws(DefaultsError) -> DefaultsValue {
        var wrapped = Data(#"{"v":"#.utf8)
        wrapped.append(data)
        wrapped.append(contentsOf: Array("\n}".utf8))
        let parsed: [ExactKey: DefaultsValue]
        do {
            parsed = try JSONReader.parseSuite(wrapped, fileURL: nil)
        } catch {
            let preview = String(decoding: data.prefix(80), as: UTF8.self)
            throw DefaultsError(.cloud, message: "the server holds a value that is not JSON (\(error.message)): \(preview)", key: key)
        }
        guard let value = parsed[ExactKey("v")] else {
            throw DefaultsError(.cloud, message: "the server holds null, which is not a value", key: key)
        }
        return value
    }
}
