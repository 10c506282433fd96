extension ArgumentSyntax {
    /// The value is the literal `nil`.
    var isNilLiteral: Bool { value.count == 1 && value[0].isIdentifier("nil") }

    /// The value of a plain string literal (single-line or multi-line, raw or not, with escapes but no
    /// interpolation); `nil` for any other expression: an interpolation, a concatenation, a name, a call.
    var stringLiteralValue: String? {
        guard value.count == 1, value[0].kind == .string else { return nil }
        return StringLiteral.value(of: value[0].text)
    }

    /// The error for an argument that must be a plain string literal and is not, at its value:
    /// `'<label>' must be a string literal: the <subject> is fixed at compile time`.
    func stringLiteralRequired(subject: String, locator: SourceLocator) -> MacroDiagnostic {
        let start = locator.file(self.start), end = locator.file(self.end)
        return MacroDiagnostic(
            .error, "'\(label ?? "_")' must be a string literal: the \(subject) is fixed at compile time",
            at: start, highlights: [start..<end])
    }
}

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
        diagnostics.append(
            MacroDiagnostic(
                .error, message,
                at: locator.file(argument.start),
                highlights: [locator.file(argument.start)..<locator.file(argument.end)]))
    }

    mutating func bool(_ label: String, default value: Bool) -> Bool {
        guard let argument = attribute?.argument(label) else { return value }
        if argument.value.count == 1, argument.value[0].kind == .identifier,
            ["true", "false"].contains(argument.value[0].text)
        {
            return argument.value[0].text == "true"
        }
        reject(argument, "'\(label)' must be a Boolean literal ('true' or 'false')")
        return value
    }

    /// A string literal argument; `nil` for a missing argument, a `nil` literal, or (with an error naming
    /// `subject`, what the string is) any expression that is not a plain string literal.
    mutating func string(_ label: String, subject: String) -> String? {
        guard let argument = attribute?.argument(label), !argument.isNilLiteral else { return nil }
        if let value = argument.stringLiteralValue { return value }
        diagnostics.append(argument.stringLiteralRequired(subject: subject, locator: locator))
        return nil
    }
}

/// The arguments of `@ObservableDefaults`, with the Apple library's defaults (except `limitToInstance`,
/// which is `false` on this platform).
public struct ObservableDefaultsOptions: Equatable, Sendable, ClassMacroOptions {
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

    static func read(_ attribute: AttributeSyntax?, locator: SourceLocator) -> (
        ObservableDefaultsOptions, [MacroDiagnostic]
    ) {
        var reader = ArgumentReader(attribute, locator: locator)
        var options = ObservableDefaultsOptions()
        options.autoInit = reader.bool("autoInit", default: true)
        options.ignoreExternalChanges = reader.bool("ignoreExternalChanges", default: false)
        // As in the Apple library: surrounding whitespace is trimmed, and an empty suite name is the standard suite.
        options.suiteName = reader.string("suiteName", subject: "suite name").map(\.trimmed).flatMap {
            $0.isEmpty ? nil : $0
        }
        options.prefix = reader.string("prefix", subject: "prefix")?.trimmed
        options.observeFirst = reader.bool("observeFirst", default: false)
        options.limitToInstance = reader.bool("limitToInstance", default: false)
        options.defaultIsolationIsMainActor = reader.bool("defaultIsolationIsMainActor", default: false)
        var diagnostics = reader.diagnostics
        if let name = options.suiteName, let problem = ClassExpansion.suiteNameProblem(name),
            let argument = attribute?.argument("suiteName")
        {
            let start = locator.file(argument.start), end = locator.file(argument.end)
            diagnostics.append(
                MacroDiagnostic(.error, "invalid suite name: \(problem)", at: start, highlights: [start..<end]))
        }
        return (options, diagnostics)
    }
}
