import Foundation
import ObservableDefaults

/// `read`, `read-type`, `domains`, `find`, `path`: verbs that only look.
struct ReadCommands {
    let access: SuiteAccess
    var json: Bool { access.options.json }

    /// `defaults read [suite [key]]`
    func read(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(0...2, verb: "read", usage: "defaults read [--show-origin] [suite [key]]")
        if access.options.showOrigin { return try readWithOrigins(arguments) }
        guard let name = arguments.first else { return try readEverything() }
        let suite = try access.openExisting(name)
        guard arguments.count == 2 else {
            let contents = DefaultsValue.dictionary(suite.values())
            return Console.out(
                json ? JSONFormat.render(contents) : HumanFormat.render(Self.forPeople(contents, in: suite), indent: 0))
        }
        let value = try Self.value(of: arguments[1], in: suite, name: name)
        Console.out(json ? JSONFormat.render(value) : HumanFormat.topLevel(Self.forPeople(value, in: suite)))
    }

    /// `defaults read --show-origin [suite [key]]`: each effective value through every layer (but the
    /// argument domain) with where it comes from, as `git config --show-origin` does:
    /// `system /etc/xdg/observable-defaults/app.json<TAB>port = 80`.
    private func readWithOrigins(_ arguments: [String]) throws(ToolError) {
        let names = arguments.isEmpty ? try access.suiteNames() : [arguments[0]]
        var rows: [(suite: String, key: String, origin: String, value: DefaultsValue)] = []
        for name in names {
            let suite = try access.openExisting(name, layers: SuiteAccess.layers)
            let keys = arguments.count == 2 ? [arguments[1]] : suite.values().keys.sorted()
            for key in keys {
                guard let value = suite.value(forKey: key), let origin = suite.origin(forKey: key) else {
                    throw ToolError("Key '\(key)' does not exist in suite '\(name)' or its layers")
                }
                rows.append((name, key, "\(origin)", Self.forPeople(value, in: suite)))
            }
        }
        if json {
            let objects = rows.map { row in
                DefaultsValue.dictionary([
                    "suite": .string(row.suite), "key": .string(row.key), "origin": .string(row.origin),
                    "value": row.value
                ])
            }
            return Console.out(JSONFormat.render(.array(objects)))
        }
        for row in rows {
            let shown = arguments.isEmpty ? "\(row.suite) \(row.key)" : row.key
            Console.out("\(row.origin)\t\(shown) = \(HumanFormat.topLevel(row.value))")
        }
    }

    /// Every suite in the directory; broken ones are reported on stderr and make the exit status 1.
    private func readEverything() throws(ToolError) {
        var all: [String: DefaultsValue] = [:]
        var failures: [String] = []
        for name in try access.suiteNames() {
            do throws(ToolError) {
                let suite = try access.openExisting(name)
                all[name] = json ? .dictionary(suite.values()) : Self.forPeople(.dictionary(suite.values()), in: suite)
            } catch {
                failures.append(error.message)
            }
        }
        let contents = DefaultsValue.dictionary(all)
        Console.out(json ? JSONFormat.render(contents) : HumanFormat.render(contents, indent: 0))
        if !failures.isEmpty { throw ToolError(failures.joined(separator: "\n")) }
    }

    /// `defaults read-type suite key`
    func readType(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(2...2, verb: "read-type", usage: "defaults read-type suite key")
        let suite = try access.openExisting(arguments[0])
        let value = try Self.value(of: arguments[1], in: suite, name: arguments[0])
        // macOS calls every floating-point number "float"; the value model has one kind of them, `.double`.
        let type: String
        if case .double = value { type = "float" } else { type = value.typeName }
        if json { return Console.out(JSONFormat.string(type)) }
        if suite.format == .json, case .string(let text) = value, let holds = JSONSuiteText.description(of: text) {
            return Console.out("Type is string (\(holds))")
        }
        Console.out("Type is \(type)")
    }

    /// `defaults domains`: the suite names on one comma-separated line, as macOS prints them (a JSON
    /// array with `--json`).
    func domains(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(0...0, verb: "domains", usage: "defaults domains")
        let names = try access.suiteNames()
        if json {
            Console.out(JSONFormat.render(.array(names.map(DefaultsValue.string))))
        } else if !names.isEmpty {
            Console.out(names.joined(separator: ", "))
        }
    }

    /// `defaults find word`: keys and values containing `word` (case-insensitive) in every suite; a suite
    /// whose name contains it is shown whole.
    func find(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(1...1, verb: "find", usage: "defaults find word")
        let word = arguments[0]
        var results: [String: DefaultsValue] = [:]
        var failures: [String] = []
        for name in try access.suiteNames() {
            let values: [String: DefaultsValue]
            do throws(ToolError) {
                values = try access.openExisting(name).values()
            } catch {
                failures.append(error.message)
                continue
            }
            let matches =
                name.localizedCaseInsensitiveContains(word)
                ? values
                : values.filter { $0.key.localizedCaseInsensitiveContains(word) || Self.contains(word, in: $0.value) }
            if !matches.isEmpty { results[name] = .dictionary(matches) }
        }
        if json {
            Console.out(JSONFormat.render(.dictionary(results)))
        } else if results.isEmpty {
            Console.out("No suite, key, nor value containing '\(word)'")
        } else {
            for name in results.keys.sorted() {
                guard case .dictionary(let matches) = results[name]! else { continue }
                Console.out(
                    "Found \(matches.count) \(matches.count == 1 ? "key" : "keys") in suite '\(name)': \(HumanFormat.render(results[name]!, indent: 0))"
                )
            }
        }
        if !failures.isEmpty { throw ToolError(failures.joined(separator: "\n")) }
    }

    /// `defaults path suite`: the suite's file, or where it will be created.
    func path(_ arguments: [String]) throws(ToolError) {
        try arguments.expectCount(1...1, verb: "path", usage: "defaults path suite")
        let url = try access.resolve(arguments[0]).url
        if json {
            let exists = SuiteAccess.entryExists(url)
            Console.out(JSONFormat.object([("path", .string(url.path)), ("exists", .bool(exists))], pretty: false))
        } else {
            Console.out(url.path)
        }
    }

    /// A JSON suite's date and data strings shown as dates and data (see ``JSONSuiteText``).
    static func forPeople(_ value: DefaultsValue, in suite: DefaultsSuite) -> DefaultsValue {
        suite.format == .json ? JSONSuiteText.interpret(value) : value
    }

    static func value(of key: String, in suite: DefaultsSuite, name: String) throws(ToolError) -> DefaultsValue {
        guard let value = suite.value(forKey: key) else {
            throw ToolError("Key '\(key)' does not exist in suite '\(name)' (\(suite.fileURL.path))")
        }
        return value
    }

    /// Whether a string somewhere inside `value` (or a dictionary key) contains `word`.
    static func contains(_ word: String, in value: DefaultsValue) -> Bool {
        switch value {
        case .string(let text): text.localizedCaseInsensitiveContains(word)
        case .array(let items): items.contains { contains(word, in: $0) }
        case .dictionary(let entries):
            entries.contains { $0.key.localizedCaseInsensitiveContains(word) || contains(word, in: $0.value) }
        default: false
        }
    }
}
