import Foundation
import ObservableDefaults

/// Options every verb accepts.
struct GlobalOptions {
    /// `--directory DIR`: the suites directory (else the library's default resolution).
    var directory: URL?
    /// `--format json|plist`: the format of suites this command creates.
    var format: SuiteFormat?
    /// `--json`: machine-readable output.
    var json = false
    /// `--help` / `-h`.
    var help = false
    /// `--show-origin` (`read`): each effective value with its layer and file, through every layer.
    var showOrigin = false
    /// `--system` / `--managed`: the verb reads or writes that layer's file of the suite instead of the
    /// suite's own file.
    var layer: LayerTarget?
}

/// A layer whose files the tool writes for an administrator (`--system`, `--managed`).
enum LayerTarget: String {
    /// The system layer: `observable-defaults/NAME.json` in the first directory of `$XDG_CONFIG_DIRS`.
    case system
    /// The managed (forced) layer: `NAME.json` in `$OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY`.
    case managed

    /// The verbs that take `--system` and `--managed`.
    static let verbs: Set<String> = ["read", "read-type", "path", "write", "delete", "rename"]

    /// The directory holding the layer's files, as the library places it now (see
    /// `DefaultsSuite.systemDirectories` and `DefaultsSuite.managedDirectory`).
    var directory: URL {
        switch self {
        case .system: DefaultsSuite.systemDirectories[0]
        case .managed: DefaultsSuite.managedDirectory
        }
    }
}

/// A command line split into the verb, its options and its positional arguments.
///
/// Long options (`--name value` or `--name=value`) may appear anywhere; `--` ends option parsing, so
/// every argument after it is positional (write `defaults write s k -string -- --json` to store the string
/// `--json`). Single-dash arguments such as `-int` are positional: the verb that takes them interprets them.
struct ParsedArguments {
    var verb: String?
    var options = GlobalOptions()
    /// Verb-specific options that take a value (`--prefix p`), by name without dashes.
    var verbOptions: [String: [String]] = [:]
    var positional: [String] = []
    /// The index in `positional` where the arguments after `--` begin (`positional.count` without `--`).
    var literalFrom: Int { literalStart ?? positional.count }
    private var literalStart: Int?

    /// Options that are valid for each verb beyond the global ones, and whether they take a value.
    static let verbSpecificOptions: [String: Set<String>] = ["watch": ["prefix"], "cloud": ["cloud", "prefix"]]

    init(_ arguments: [String]) throws(ToolError) {
        var index = 0
        var optionsEnded = false
        func takeValue(_ name: String, inline: String?) throws(ToolError) -> String {
            if let inline { return inline }
            index += 1
            guard index < arguments.count else { throw .usage("option --\(name) needs a value", verb: verb) }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            defer { index += 1 }
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                if verb == nil && !optionsEnded { verb = argument } else { positional.append(argument) }
                continue
            }
            if argument == "--" {
                optionsEnded = true
                literalStart = positional.count
                continue
            }
            if (argument == "-h" || argument == "-help") && positional.isEmpty {
                // Help, unless it comes after the verb's arguments (`write app k -string -h` stores "-h").
                options.help = true
                continue
            }
            guard argument.hasPrefix("--") else {
                // A single-dash argument belongs to the verb (type flags of `write`, negative numbers).
                if verb == nil {
                    // `defaults -currentHost read ...`: the macOS options get their own explanation.
                    let isMacOSOption = ["-currentHost", "-host"].contains(argument)
                    throw .usage(isMacOSOption ? DomainFile.optionMessage(argument)! : "unknown option '\(argument)'")
                }
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            switch name {
            case "help":
                options.help = true
            case "json":
                options.json = true
            case "show-origin":
                guard verb == "read" else { throw .usage("--show-origin is an option of read", verb: verb) }
                options.showOrigin = true
            case "system", "managed":
                guard let verb, LayerTarget.verbs.contains(verb) else {
                    throw .usage(
                        "--\(name) is an option of read, read-type, path, write, delete and rename", verb: verb)
                }
                if inline != nil { throw .usage("option --\(name) takes no value", verb: verb) }
                let layer = LayerTarget(rawValue: name)
                if let other = options.layer, other != layer {
                    throw .usage("--system and --managed name two layers; give one", verb: verb)
                }
                options.layer = layer
            case "directory":
                let value = try takeValue(name, inline: inline)
                guard !value.isEmpty else { throw .usage("option --directory needs a directory", verb: verb) }
                options.directory = URL(fileURLWithPath: value, isDirectory: true).standardizedFileURL
            case "format":
                let value = try takeValue(name, inline: inline)
                guard let format = SuiteFormat(fileExtension: value) else {
                    throw .usage("unknown format '\(value)': expected json or plist", verb: verb)
                }
                options.format = format
            default:
                guard let verb, Self.verbSpecificOptions[verb]?.contains(name) == true else {
                    throw .usage("unknown option '--\(name)'", verb: verb)
                }
                verbOptions[name, default: []].append(try takeValue(name, inline: inline))
            }
        }
        if let layer = options.layer {
            if options.directory != nil {
                throw .usage(
                    "--\(layer) writes the layer's own directory; it cannot be combined with --directory", verb: verb)
            }
            if options.showOrigin {
                throw .usage(
                    "--show-origin reads through every layer; it cannot be combined with --\(layer)", verb: verb)
            }
        }
    }
}

extension Array where Element == String {
    /// Throws a usage error unless the count is within `range`.
    func expectCount(_ range: ClosedRange<Int>, verb: String, usage: String) throws(ToolError) {
        if count < range.lowerBound { throw .usage("missing arguments; usage: \(usage)", verb: verb) }
        if count > range.upperBound {
            throw .usage("unexpected argument '\(self[range.upperBound])'; usage: \(usage)", verb: verb)
        }
    }
}
