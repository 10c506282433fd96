/// Validates a property that a property macro is attached to and reports precise diagnostics.
struct PropertyChecks {
    let member: MemberSyntax
    let locator: SourceLocator
    let macroName: String

    /// Errors for a property that cannot be expanded; empty when it can.
    func diagnostics(requireInitializer: Bool) -> [MacroDiagnostic] {
        var result: [MacroDiagnostic] = []
        switch member.kind {
        case .constant:
            result.append(
                MacroDiagnostic(
                    .error, "'@\(macroName)' cannot be applied to a 'let' constant; use 'var'",
                    at: locator.file(member.keywordStart),
                    highlights: [locator.file(member.keywordStart)..<locator.file(member.keywordEnd)],
                    fixIts: [
                        .init(
                            message: "replace 'let' with 'var'",
                            changes: [
                                .init(
                                    start: locator.file(member.keywordStart), end: locator.file(member.keywordEnd),
                                    newText: "var")
                            ])
                    ]))
            return result
        case .other(let keyword):
            result.append(
                MacroDiagnostic(
                    .error, "'@\(macroName)' can only be applied to a stored 'var' property, not to '\(keyword)'",
                    at: locator.file(member.keywordStart)))
            return result
        case .variable:
            break
        }
        if member.isStatic {
            result.append(
                MacroDiagnostic(
                    .error, "'@\(macroName)' cannot be applied to a static property",
                    at: locator.file(member.keywordStart)))
        }
        if member.bindings.count > 1 {
            let second = member.bindings[1]
            result.append(
                MacroDiagnostic(
                    .error,
                    "'@\(macroName)' cannot be applied to a declaration with several bindings; declare each property with its own 'var'",
                    at: locator.file(second.nameStart),
                    highlights: [locator.file(second.nameStart)..<locator.file(second.nameEnd)]))
            return result
        }
        guard let binding = member.bindings.first else {
            result.append(MacroDiagnostic(.error, "expected a property name", at: locator.file(member.keywordEnd)))
            return result
        }
        if binding.name == nil {
            result.append(
                MacroDiagnostic(
                    .error, "'@\(macroName)' needs a single named property, not a tuple pattern",
                    at: locator.file(binding.nameStart)))
            return result
        }
        if !binding.isStored {
            result.append(
                MacroDiagnostic(
                    .error, "'@\(macroName)' cannot be applied to a computed property",
                    at: locator.file(binding.nameStart),
                    highlights: [locator.file(binding.nameStart)..<locator.file(binding.nameEnd)]))
            return result
        }
        let name = binding.name ?? ""
        let isOptional = binding.type.map(PropertyExpansion.isOptional) ?? false
        if binding.initializer == nil && ((requireInitializer && !isOptional) || binding.type == nil) {
            let insertAt = locator.file(binding.typeEnd ?? binding.nameEnd)
            let text = " = <#default value#>"
            result.append(
                MacroDiagnostic(
                    .error, "property '\(name)' needs an initial value: it is the default used when the key is missing",
                    at: locator.file(binding.nameStart),
                    highlights: [locator.file(binding.nameStart)..<locator.file(binding.nameEnd)],
                    fixIts: [
                        .init(
                            message: "add an initial value",
                            changes: [.init(start: insertAt, end: insertAt, newText: text)])
                    ]))
        }
        if binding.accessors != nil, binding.type == nil, LiteralType.infer(binding.initializer) == nil {
            result.append(
                MacroDiagnostic(
                    .error, "property '\(name)' has 'willSet'/'didSet'; give it an explicit type annotation",
                    at: locator.file(binding.nameEnd)))
        }
        return result
    }
}
