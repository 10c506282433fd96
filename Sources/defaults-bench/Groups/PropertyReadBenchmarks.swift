import Foundation
import ObservableDefaults

/// Group 1: reading one property — the `@ObservableDefaults` copy, a plain `@Observable` property, and the
/// paths the Apple library takes on every get (`UserDefaults.object(forKey:)` + cast, or
/// `UserDefaults.data(forKey:)` + `JSONDecoder` for Codable values).
enum PropertyReadBenchmarks {
    static func run(_ context: BenchContext) -> GroupResult {
        let settings = context.settings
        var group = GroupResult(
            number: 1, title: "Property read",
            method: "One property read per operation, in a loop whose results are folded into a printed checksum. "
                + "Ratios are against the plain `@Observable` property of the same type.")

        let plain = PlainSettings()
        let suite = openSuite(context.directory("read").appendingPathComponent("read.json"))
        suite.performBatchUpdates {
            suite.set(.string(plain.name), forKey: BenchKeys.name)
            suite.set(.integer(plain.count), forKey: BenchKeys.count)
            suite.set(.string(plain.mode.rawValue), forKey: BenchKeys.mode)
            // Force-try: encoding a fixed struct of strings, integers and booleans cannot fail.
            suite.set(try! DefaultsValueEncoder().encode(plain.endpoint), forKey: BenchKeys.endpoint)
        }
        let scratch = ScratchUserDefaults("read")
        defer { scratch.remove() }
        let defaults = scratch.defaults
        defaults.set(plain.name, forKey: BenchKeys.name)
        defaults.set(plain.count, forKey: BenchKeys.count)
        defaults.set(plain.mode.rawValue, forKey: BenchKeys.mode)
        defaults.set(try! JSONEncoder().encode(plain.endpoint), forKey: BenchKeys.endpoint)

        let object = opaque(plain)
        let decoder = DefaultsValueDecoder()

        // String
        context.progress("1. property read: String")
        group.append(row("string.plain", "String: plain `@Observable`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= object.name.utf8.count }
            return sum
        })
        group.append(contentsOf: MacroRows.propertyRead(context, id: "string"))
        group.append(row("string.suite", "String: `DefaultsSuite.value(String.self, forKey:)`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= suite.value(String.self, forKey: BenchKeys.name)?.utf8.count ?? 0 }
            return sum
        })
        group.append(row("string.userdefaults", "String: `UserDefaults.object(forKey:) as? String`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= (defaults.object(forKey: BenchKeys.name) as? String)?.utf8.count ?? 0 }
            return sum
        })

        // Int
        context.progress("1. property read: Int")
        group.append(row("int.plain", "Int: plain `@Observable`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= object.count }
            return sum
        })
        group.append(contentsOf: MacroRows.propertyRead(context, id: "int"))
        group.append(row("int.suite", "Int: `DefaultsSuite.value(Int.self, forKey:)`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= suite.value(Int.self, forKey: BenchKeys.count) ?? 0 }
            return sum
        })
        group.append(row("int.userdefaults", "Int: `UserDefaults.object(forKey:) as? Int`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= defaults.object(forKey: BenchKeys.count) as? Int ?? 0 }
            return sum
        })

        // Enum
        context.progress("1. property read: enum")
        group.append(row("enum.plain", "enum: plain `@Observable`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= object.mode == .balanced ? 1 : 2 }
            return sum
        })
        group.append(contentsOf: MacroRows.propertyRead(context, id: "enum"))
        group.append(row("enum.suite", "enum: `DefaultsSuite.value(String.self, forKey:)` + `init(rawValue:)`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= suite.value(String.self, forKey: BenchKeys.mode).flatMap(BenchMode.init(rawValue:)) == .balanced ? 1 : 2 }
            return sum
        })
        group.append(row("enum.userdefaults", "enum: `UserDefaults.object(forKey:) as? String` + `init(rawValue:)`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= (defaults.object(forKey: BenchKeys.mode) as? String).flatMap(BenchMode.init(rawValue:)) == .balanced ? 1 : 2 }
            return sum
        })

        // Codable struct
        context.progress("1. property read: Codable struct")
        group.append(row("codable.plain", "Codable struct: plain `@Observable`") { n in
            var sum = 0
            for _ in 0..<n { sum &+= object.endpoint.port }
            return sum
        })
        group.append(contentsOf: MacroRows.propertyRead(context, id: "codable"))
        group.append(row("codable.suite", "Codable struct: `DefaultsSuite.value(forKey:)` + `DefaultsValueDecoder`") { n in
            var sum = 0
            for _ in 0..<n {
                if let stored = suite.value(forKey: BenchKeys.endpoint), let value = try? decoder.decode(BenchEndpoint.self, from: stored) {
                    sum &+= value.port
                }
            }
            return sum
        })
        group.append(row("codable.userdefaults", "Codable struct: `UserDefaults.data(forKey:)` + `JSONDecoder`") { n in
            var sum = 0
            for _ in 0..<n {
                if let data = defaults.data(forKey: BenchKeys.endpoint), let value = try? JSONDecoder().decode(BenchEndpoint.self, from: data) {
                    sum &+= value.port
                }
            }
            return sum
        })

        for type in ["string", "int", "enum", "codable"] {
            for variant in ["macro", "suite", "userdefaults"] { group.relate("\(type).\(variant)", to: "\(type).plain") }
        }
        group.notes.append("`UserDefaults` is swift-corelibs-foundation's implementation on Linux; the Apple library reads through it on every get.")
        group.notes.append("The Codable `UserDefaults` row creates a `JSONDecoder` per read, as a property getter does.")

        func row(_ id: String, _ name: String, _ body: (Int) -> Int) -> ResultRow {
            ResultRow(id: id, name: name, statistics: Sampler.perOperation(settings, body))
        }
        return group
    }
}

extension GroupResult {
    mutating func append(contentsOf rows: [ResultRow]) { self.rows.append(contentsOf: rows) }
}
