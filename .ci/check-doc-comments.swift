// Run by .ci/build-docs: `swift check-doc-comments.swift DIR` reads the symbol graphs in DIR and fails
// naming every public declaration written in our sources that has no doc comment of its own. DocC cannot
// report these: it silently shows an empty abstract, or the protocol's text for a requirement's witness.
import Foundation

let directory = URL(fileURLWithPath: CommandLine.arguments[1])
let graphs = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
    .filter { $0.lastPathComponent.hasSuffix(".symbols.json") }
guard !graphs.isEmpty else {
    FileHandle.standardError.write(Data("error: no symbol graphs in \(directory.path)\n".utf8))
    exit(1)
}

var undocumented: [String] = []
var checked = 0
for graph in graphs {
    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: graph)) as? [String: Any] ?? [:]
    let moduleName = (json["module"] as? [String: Any])?["name"] as? String
    for case let symbol as [String: Any] in json["symbols"] as? [Any] ?? [] {
        // A symbol without a location is synthesized by the compiler (`init(rawValue:)` of a raw enum):
        // there is no declaration to comment.
        guard let location = symbol["location"] as? [String: Any] else { continue }
        checked += 1
        let comment = symbol["docComment"] as? [String: Any]
        let lines = (comment?["lines"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        // A comment from another module is inherited (a protocol requirement's text), not our own.
        let isOwn = (comment?["module"] as? String).map { $0 == moduleName } ?? true
        if isOwn && lines.contains(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) { continue }
        let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
        let file = (location["uri"] as? String).flatMap { URL(string: $0)?.path } ?? "<unknown file>"
        let line = ((location["position"] as? [String: Any])?["line"] as? Int).map { $0 + 1 } ?? 0
        undocumented.append("\(file):\(line): error: public symbol '\(path)' has no doc comment")
    }
}

if undocumented.isEmpty {
    print("doc comments: all \(checked) public declarations are documented")
} else {
    FileHandle.standardError.write(Data((undocumented.sorted().joined(separator: "\n") + "\n").utf8))
    exit(1)
}
