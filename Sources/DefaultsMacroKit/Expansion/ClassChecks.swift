// The diagnostics of the class macro's member role.
extension ClassExpansion {
    /// Warnings for keys that cannot work as written: the family's key attribute (`@DefaultsKey`) on a property
    /// that is not stored, and two stored properties under one key.
    static func keyWarnings(_ type: TypeDeclSyntax, observeFirst: Bool, family: MacroFamily, locator: SourceLocator)
        -> [MacroDiagnostic]
    {
        var warnings: [MacroDiagnostic] = []
        var owners: [String: String] = [:]
        for member in type.members {
            let role = PropertyRole.of(member, observeFirst: observeFirst).role
            if role != .persisted, let key = member.attribute(family.keyAttribute),
                let name = member.bindings.first?.name
            {
                let hint = observeFirst ? " (in observeFirst mode, mark it '@\(family.persistedAttribute)')" : ""
                warnings.append(
                    MacroDiagnostic(
                        .warning, "'@\(family.keyAttribute)' has no effect: '\(name)' is not stored\(hint)",
                        at: locator.file(key.start), highlights: [locator.file(key.start)..<locator.file(key.end)]))
            }
            guard role == .persisted, PropertyRole.isExpandable(member, needsInitializer: true),
                let binding = member.bindings.first, let name = binding.name,
                PropertyKey.isReadable(member, family: family)
            else { continue }
            let key = PropertyKey.literal(of: member, family: family)
            if let owner = owners[key], member.ifConfig.isEmpty {
                warnings.append(
                    MacroDiagnostic(
                        .warning, "'\(name)' and '\(owner)' are both stored under the key '\(key)'",
                        at: locator.file(binding.nameStart),
                        highlights: [locator.file(binding.nameStart)..<locator.file(binding.nameEnd)]))
            } else if member.ifConfig.isEmpty {
                owners[key] = name
            }
        }
        return warnings
    }

    /// The error for a second class macro on one class (`@ObservableDefaults @ObservableCloud`), reported by
    /// the one written second, at its attribute; `nil` when `family`'s class macro is the first. The first one
    /// expands as usual and the second adds nothing, so the compiler reports one error, not a clash of
    /// generated members.
    static func classMacroConflict(_ type: TypeDeclSyntax, family: MacroFamily, locator: SourceLocator)
        -> MacroDiagnostic?
    {
        guard let first = MacroFamily.of(type), first != family,
            let own = type.attributes.first(where: { $0.name == family.classAttribute })
        else { return nil }
        let start = locator.file(own.start), end = locator.file(own.end)
        return MacroDiagnostic(
            .error, "'@\(first.classAttribute)' and '@\(family.classAttribute)' cannot be applied to the same class",
            at: start, highlights: [start..<end],
            fixIts: [
                .init(
                    message: "remove '@\(family.classAttribute)'", changes: [.init(start: start, end: end, newText: "")]
                )
            ])
    }

    /// Errors for another family's property attributes on the members (with a fix-it naming this family's
    /// counterpart).
    static func mixedFamilies(_ type: TypeDeclSyntax, family: MacroFamily, locator: SourceLocator) -> [MacroDiagnostic]
    {
        var errors: [MacroDiagnostic] = []
        for other in family.others {
            for member in type.members {
                for attribute in member.attributes {
                    guard let replacement = family.counterpart(of: attribute.name, in: other) else { continue }
                    let start = locator.file(attribute.start), end = locator.file(attribute.end)
                    errors.append(
                        MacroDiagnostic(
                            .error,
                            "'@\(attribute.name)' belongs to '@\(other.classAttribute)'; use '@\(replacement)' in an '@\(family.classAttribute)' class",
                            at: start, highlights: [start..<end],
                            fixIts: [
                                .init(
                                    message: "use '@\(replacement)'",
                                    changes: [
                                        .init(
                                            start: start, end: end,
                                            newText: "@" + replacement
                                                + translatedArguments(attribute, from: other, to: family))
                                    ])
                            ]))
                }
            }
        }
        return errors
    }

    /// The arguments of another family's attribute with that family's key label replaced by this family's
    /// (`(keyValueStoreKey: "k")` → `(userDefaultsKey: "k")`); empty when it has no argument list.
    private static func translatedArguments(
        _ attribute: AttributeSyntax, from other: MacroFamily, to family: MacroFamily
    ) -> String {
        guard let arguments = attribute.arguments else { return "" }
        let list = arguments.map { argument in
            guard let label = argument.label else { return argument.valueText }
            return (label == other.keyLabel ? family.keyLabel : label) + ": " + argument.valueText
        }
        return "(" + list.joined(separator: ", ") + ")"
    }

    /// Why a suite name cannot name a file in the suites directory (the store's rules), or `nil`.
    static func suiteNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        if name.contains("/") { return "'\(name)' contains '/'" }
        if name.contains("\0") { return "it contains a NUL character" }
        if name == "." || name == ".." { return "'\(name)' is not a file name" }
        if name.utf8.count > 240 { return "it is longer than 240 bytes" }
        return nil
    }

    /// Several bindings in one declaration: each property needs its own accessors and key.
    static func severalBindings(_ member: MemberSyntax, source: String, locator: SourceLocator, macroName: String)
        -> MacroDiagnostic
    {
        let text = SourceText(source)
        var lineStart = member.start
        while lineStart > 0 && text.bytes[lineStart - 1] != UInt8(ascii: "\n") { lineStart -= 1 }
        let indentation = String(text.slice(lineStart, member.start).prefix { $0 == " " || $0 == "\t" })
        let prefix = text.slice(member.start, member.keywordEnd)
        var changes: [MacroDiagnostic.Change] = []
        for index in 1..<member.bindings.count {
            let previous = member.bindings[index - 1], binding = member.bindings[index]
            changes.append(
                .init(
                    start: locator.file(previous.end), end: locator.file(binding.nameStart),
                    newText: "\n" + indentation + prefix + " "))
        }
        let second = member.bindings[1]
        return MacroDiagnostic(
            .error,
            "'@\(macroName)' needs one property per declaration; '\(second.nameText)' shares its declaration with '\(member.bindings[0].nameText)'",
            at: locator.file(second.nameStart),
            highlights: [locator.file(second.nameStart)..<locator.file(second.nameEnd)],
            fixIts: [.init(message: "declare each property separately", changes: changes)])
    }
}
