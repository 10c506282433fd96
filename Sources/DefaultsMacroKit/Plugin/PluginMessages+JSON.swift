// The messages to and from `PluginJSON`, with the shapes Swift's synthesized `Codable` gives them (the
// compiler's side is `Codable`): a missing or `null` optional field is `nil`, a missing or mistyped
// required field fails the whole message, unknown fields are ignored, and an enum case is an object with
// one member named for the case.

extension PluginMessages.Location {
    init?(json: PluginJSON?) {
        guard let json, let fileName = json["fileName"]?.string, let offset = json["offset"]?.int else { return nil }
        self.init(fileName: fileName, offset: offset)
    }
}

extension PluginMessages.Syntax {
    init?(json: PluginJSON?) {
        guard let json, let source = json["source"]?.string,
            let location = PluginMessages.Location(json: json["location"]),
            let kind = PluginMessages.optional(json["kind"], \.string)
        else { return nil }
        self.init(kind: kind, source: source, location: location)
    }
}

extension PluginMessages.MacroReference {
    init?(json: PluginJSON?) {
        guard let json, let moduleName = json["moduleName"]?.string, let typeName = json["typeName"]?.string,
            let name = PluginMessages.optional(json["name"], \.string)
        else { return nil }
        self.init(moduleName: moduleName, typeName: typeName, name: name)
    }
}

extension PluginMessages.ExpandAttached {
    init?(json: PluginJSON?) {
        guard let json, let macro = PluginMessages.MacroReference(json: json["macro"]),
            let macroRole = json["macroRole"]?.string,
            let attributeSyntax = PluginMessages.Syntax(json: json["attributeSyntax"]),
            let declSyntax = PluginMessages.Syntax(json: json["declSyntax"]),
            let parentDeclSyntax = PluginMessages.optional(
                json["parentDeclSyntax"], { PluginMessages.Syntax(json: $0) }),
            let extendedTypeSyntax = PluginMessages.optional(
                json["extendedTypeSyntax"], { PluginMessages.Syntax(json: $0) }),
            let conformanceListSyntax = PluginMessages.optional(
                json["conformanceListSyntax"], { PluginMessages.Syntax(json: $0) }),
            let lexicalContext = PluginMessages.optional(json["lexicalContext"], PluginMessages.syntaxList)
        else { return nil }
        self.init(
            macro: macro, macroRole: macroRole, attributeSyntax: attributeSyntax, declSyntax: declSyntax,
            parentDeclSyntax: parentDeclSyntax, extendedTypeSyntax: extendedTypeSyntax,
            conformanceListSyntax: conformanceListSyntax, lexicalContext: lexicalContext)
    }
}

extension PluginMessages.ExpandFreestanding {
    init?(json: PluginJSON?) {
        guard let json, let macro = PluginMessages.MacroReference(json: json["macro"]),
            let syntax = PluginMessages.Syntax(json: json["syntax"])
        else { return nil }
        self.init(macro: macro, syntax: syntax)
    }
}

extension PluginMessages.GetCapability {
    init?(json: PluginJSON?) {
        guard let json, case .object = json,
            let capability = PluginMessages.optional(
                json["capability"],
                { capability -> PluginMessages.Capability? in
                    capability["protocolVersion"]?.int.map { PluginMessages.Capability(protocolVersion: $0) }
                })
        else { return nil }
        self.init(capability: capability)
    }
}

extension PluginMessages.HostMessage {
    /// Reads a message from the compiler; `nil` when it is not valid JSON or a known field is malformed.
    init?(json: PluginJSON) {
        guard case .object = json,
            let getCapability = PluginMessages.optional(
                json["getCapability"], { PluginMessages.GetCapability(json: $0) }),
            let expandAttachedMacro = PluginMessages.optional(
                json["expandAttachedMacro"], { PluginMessages.ExpandAttached(json: $0) }),
            let expandFreestandingMacro = PluginMessages.optional(
                json["expandFreestandingMacro"], { PluginMessages.ExpandFreestanding(json: $0) }),
            let loadPluginLibrary = PluginMessages.optional(
                json["loadPluginLibrary"],
                { value -> PluginMessages.Empty? in
                    if case .object = value { return PluginMessages.Empty() }
                    return nil
                })
        else { return nil }
        self.init(
            getCapability: getCapability, expandAttachedMacro: expandAttachedMacro,
            expandFreestandingMacro: expandFreestandingMacro, loadPluginLibrary: loadPluginLibrary)
    }
}

extension PluginMessages {
    /// An optional field: `.some(nil)` when missing or `null`, `.some(value)` when it reads, `nil` (the
    /// message fails) when it is present but malformed.
    static func optional<Value>(_ json: PluginJSON?, _ read: (PluginJSON) -> Value?) -> Value?? {
        guard let json, !json.isNull else { return .some(nil) }
        guard let value = read(json) else { return nil }
        return .some(value)
    }

    static func syntaxList(_ json: PluginJSON) -> [Syntax]? {
        guard let elements = json.array else { return nil }
        var nodes: [Syntax] = []
        for element in elements {
            guard let node = Syntax(json: element) else { return nil }
            nodes.append(node)
        }
        return nodes
    }
}

// MARK: - Responses

extension PluginMessages.Position {
    var json: PluginJSON { .object(["fileName": .string(fileName), "offset": .number(String(offset))]) }
}

extension PluginMessages.Range {
    var json: PluginJSON {
        .object([
            "fileName": .string(fileName),
            "startOffset": .number(String(startOffset)),
            "endOffset": .number(String(endOffset))
        ])
    }
}

extension PluginMessages.Diagnostic {
    var json: PluginJSON {
        let fixIts: [PluginJSON] = fixIts.map { fixIt in
            let changes: [PluginJSON] = fixIt.changes.map {
                .object(["range": $0.range.json, "newText": .string($0.newText)])
            }
            return .object(["message": .string(fixIt.message), "changes": .array(changes)])
        }
        let notes: [PluginJSON] = notes.map { .object(["position": $0.position.json, "message": .string($0.message)]) }
        return .object([
            "message": .string(message),
            "severity": .string(severity),
            "position": position.json,
            "highlights": .array(highlights.map(\.json)),
            "notes": .array(notes),
            "fixIts": .array(fixIts)
        ])
    }
}

extension PluginMessages.Response {
    var json: PluginJSON {
        switch self {
        case .getCapabilityResult(let result):
            let capability: PluginJSON = .object(["protocolVersion": .number(String(result.capability.protocolVersion))]
            )
            return .object(["getCapabilityResult": .object(["capability": capability])])
        case .expandMacroResult(let result):
            let source: PluginJSON = result.expandedSource.map(PluginJSON.string) ?? .null
            let diagnostics: PluginJSON = .array(result.diagnostics.map(\.json))
            return .object(["expandMacroResult": .object(["expandedSource": source, "diagnostics": diagnostics])])
        case .loadPluginLibraryResult(let result):
            let diagnostics: PluginJSON = .array(result.diagnostics.map(\.json))
            return .object([
                "loadPluginLibraryResult": .object(["loaded": .bool(result.loaded), "diagnostics": diagnostics])
            ])
        }
    }
}
