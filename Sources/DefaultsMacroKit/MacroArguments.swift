/// Reads literal macro arguments (`true`, `false`, `nil`, plain string literals) and reports a diagnostic
/// for anything else: the plugin only sees source text, so arguments must be literals.
struct ArgumentReader {
    let attribute: AttributeSyntax?
    let locator: SourceLocator
    var diagnostics: [MacroDiagnostic] = []

    init(_ attribute: AttributeSyntax?, locator: SourceLocator) {
        self.attribute = attribute
        self.locator = locator
    }

    /// Reports an argument that is not the literal it must be, highlighting its value.
    private mutating func reject(_ argument: ArgumentSyntax, _ message: String) {
        diagnostics.append(MacroDiagnostic(
            .error, message,
            at: locator.file(argument.start), highlights: [locator.file(argument.start)..<locator.file(argument.end)]))
    }

    mutating func bool(_ label: String, default value: Bool) -> Bool {
        guard let argument = attribute?.argument(label) else { return value }
        if argument.value.count == 1, argument.value[0].kind == .identifier, ["true", "false"].contains(argument.value[0].text) {
            return argument.value[0].text == "true"
        }
        reject(argument, "'\(label)' must be a Boolean literal ('true' or 'false')")
        return value
    }

    /// A string literal argument; `nil` for a missing argument or a `nil` literal.
    mutating func string(_ label: String) -> String? {
        guard let argument = attribute?.argument(label) else { return nil }
        if argument.value.count == 1, argument.value[0].isIdentifier("nil") { return nil }
        if argument.value.count == 1, argument.value[0].kind == .string, let value = StringLiteral.value(of: argument.value[0].text) {
            return value
        }
        reject(argument, "'\(label)' must be a string literal without interpolation")
        return nil
    }
}

/// Decodes the value of a simple string literal.
enum StringLiteral {
    /// The value of a single-line literal with escapes but no interpolation; `nil` otherwise.
    static func value(of text: String) -> String? {
        var hashes = 0
        var body = Substring(text)
        while body.first == "#" && body.last == "#" && body.count >= 2 {
            body = body.dropFirst().dropLast()
            hashes += 1
        }
        guard body.count >= 2, body.first == "\"", body.last == "\"", !body.hasPrefix("\"\"\"") else { return nil }
        body = body.dropFirst().dropLast()
        let escape = "\\" + String(repeating: "#", count: hashes)
        var result = ""
        var rest = body
        while let range = rest.range(of: escape) {
            result += rest[rest.startIndex..<range.lowerBound]
            rest = rest[range.upperBound...]
            guard let next = rest.first else { return nil }
            rest = rest.dropFirst()
            switch next {
            case "n": result += "\n"
            case "t": result += "\t"
            case "r": result += "\r"
            case "0": result += "\0"
            case "\\": result += "\\"
            case "\"": result += "\""
            case "'": result += "'"
            case "u":
                guard rest.first == "{", let close = rest.firstIndex(of: "}"),
                      let scalar = UInt32(rest[rest.index(after: rest.startIndex)..<close], radix: 16),
                      let unicode = Unicode.Scalar(scalar) else { return nil }
                result.unicodeScalars.append(unicode)
                rest = rest[rest.index(after: close)...]
            default:
                return nil  // `\(` interpolation or an unknown escape
            }
        }
        result += rest
        return result
    }

    /// Swift source for a string literal holding `value`.
    static func quote(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}

/// The arguments of `@ObservableDefaults`, with the Apple library's defaults (except `limitToInstance`,
/// which is `false` on this platform).
public struct ObservableDefaultsOptions: Equatable, Sendable {
    /// Generate `init(userDefaults:ignoreExternalChanges:prefix:ignoredKeyPathsForExternalUpdates:)`.
    public var autoInit = true
    /// Do not observe the suite: the object hears only its own writes.
    public var ignoreExternalChanges = false
    /// The suite's name, trimmed; `nil` for the standard suite (also for `""`).
    public var suiteName: String?
    /// Prepended to every property's key (trimmed).
    public var prefix: String?
    /// Properties are `@ObservableOnly` unless marked `@DefaultsBacked`.
    public var observeFirst = false
    /// Observe changes made in this process only (no file watching).
    public var limitToInstance = false
    /// The class is main-actor isolated even without `@MainActor` (the module's default isolation).
    public var defaultIsolationIsMainActor = false

    /// The options of `@ObservableDefaults` without arguments.
    public init() {}

    static func read(_ attribute: AttributeSyntax?, locator: SourceLocator) -> (ObservableDefaultsOptions, [MacroDiagnostic]) {
        var reader = ArgumentReader(attribute, locator: locator)
        var options = ObservableDefaultsOptions()
        options.autoInit = reader.bool("autoInit", default: true)
        options.ignoreExternalChanges = reader.bool("ignoreExternalChanges", default: false)
        // As in the Apple library: surrounding whitespace is trimmed, and an empty suite name is the standard suite.
        options.suiteName = reader.string("suiteName").map(\.trimmed).flatMap { $0.isEmpty ? nil : $0 }
        options.prefix = reader.string("prefix")?.trimmed
        options.observeFirst = reader.bool("observeFirst", default: false)
        options.limitToInstance = reader.bool("limitToInstance", default: false)
        options.defaultIsolationIsMainActor = reader.bool("defaultIsolationIsMainActor", default: false)
        return (options, reader.diagnostics)
    }
}
