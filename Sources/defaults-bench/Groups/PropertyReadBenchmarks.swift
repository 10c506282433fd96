import Foundation
import ObservableDefaults

/// Group 1: reading one property — the `@ObservableDefaults` copy, a plain `@Observable` property, and the
/// paths the Apple library takes on every get (`UserDefaults.object(forKey:)` + cast, or
/// `UserDefaults.data(forKey:)` + `JSONDecoder` for Codable values).
enum PropertyReadBenchmarks {
    /// One row to measure: its id suffix, its name, and the loop.
    typealias Entry = (variant: String, name: String, body: (Int) -> Int)

    static func run(_ context: BenchContext) -> GroupResult {
        var group = GroupResult(
            number: 1, title: "Property read",
            method: "One property read per operation, in a loop whose results are folded into a printed checksum. "
                + "The rows of one type are sampled interleaved (round-robin batches). Ratios are against the plain "
                + "`@Observable` property of the same type.")

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

        measure(
            "string", "String",
            [
                (
                    "plain", "String: plain `@Observable`",
                    { n in
                        var sum = 0
                        for _ in 0..<n { sum &+= object.name.utf8.count }
                        return sum
                    }
                ),
                MacroRows.propertyRead(context, id: "string"),
                (
                    "suite", "String: `DefaultsSuite.value(String.self, forKey:)`",
                    { n in
                        var sum = 0
                        for _ in 0..<n { sum &+= suite.value(String.self, forKey: BenchKeys.name)?.utf8.count ?? 0 }
                        return sum
                    }
                ),
                (
                    "userdefaults", "String: `UserDefaults.object(forKey:) as? String`",
                    { n in
                        var sum = 0
                        for _ in 0..<n { sum &+= (defaults.object(forKey: BenchKeys.name) as? String)?.utf8.count ?? 0 }
                        return sum
                    }
                )
            ])

        measure(
            "int", "Int",
            [
                (
                    "plain", "Int: plain `@Observable`",
                    { n in
                        var sum = 0
                        for _ in 0..<n { sum &+= object.count }
                        return sum
                    }
                ),
                MacroRows.propertyRead(context, id: "int"),
                (
                    "suite", "Int: `DefaultsSuite.value(Int.self, forKey:)`",
                    { n in
                        var sum = 0
                        for _ in 0..<n { sum &+= suite.value(Int.self, forKey: BenchKeys.count) ?? 0 }
                        return sum
                    }
                ),
                (
                    "userdefaults", "Int: `UserDefaults.object(forKey:) as? Int`",
                    { n in
                        var sum = 0
                        for _ in 0..<n { sum &+= defaults.object(forKey: BenchKeys.count) as? Int ?? 0 }
                        return sum
                    }
                )
            ])

        measure(
            "enum", "enum",
            [
                (
                    "plain", "enum: plain `@Observable`",
                    { n in
                        var sum = 0
                        for _ in 0..<n { sum &+= object.mode == .balanced ? 1 : 2 }
                        return sum
                    }
                ),
                MacroRows.propertyRead(context, id: "enum"),
                (
                    "suite", "enum: `DefaultsSuite.value(String.self, forKey:)` + `init(rawValue:)`",
                    { n in
                        var sum = 0
                        for _ in 0..<n {
                            sum &+=
                                suite.value(String.self, forKey: BenchKeys.mode).flatMap(BenchMode.init(rawValue:))
                                    == .balanced ? 1 : 2
                        }
                        return sum
                    }
                ),
                (
                    "userdefaults", "enum: `UserDefaults.object(forKey:) as? String` + `init(rawValue:)`",
                    { n in
                        var sum = 0
                        for _ in 0..<n {
                            sum &+=
                                (defaults.object(forKey: BenchKeys.mode) as? String).flatMap(BenchMode.init(rawValue:))
                                    == .balanced ? 1 : 2
                        }
                        return sum
                    }
                )
            ])

        measure(
            "codable", "Codable struct",
            [
                (
                    "plain", "Codable struct: plain `@Observable`",
                    { n in
                        var sum = 0
                        for _ in 0..<n { sum &+= object.endpoint.port }
                        return sum
                    }
                ),
                MacroRows.propertyRead(context, id: "codable"),
                (
                    "suite", "Codable struct: `DefaultsSuite.value(forKey:)` + `DefaultsValueDecoder`",
                    { n in
                        var sum = 0
                        for _ in 0..<n {
                            if let stored = suite.value(forKey: BenchKeys.endpoint),
                                let value = try? decoder.decode(BenchEndpoint.self, from: stored)
                            {
                                sum &+= value.port
                            }
                        }
                        return sum
                    }
                ),
                (
                    "userdefaults", "Codable struct: `UserDefaults.data(forKey:)` + `JSONDecoder`",
                    { n in
                        var sum = 0
                        for _ in 0..<n {
                            if let data = defaults.data(forKey: BenchKeys.endpoint),
                                let value = try? JSONDecoder().decode(BenchEndpoint.self, from: data)
                            {
                                sum &+= value.port
                            }
                        }
                        return sum
                    }
                )
            ])

        group.notes.append(
            "`UserDefaults` is swift-corelibs-foundation's implementation on Linux; the Apple library reads through it on every get."
        )
        group.notes.append(
            "The Codable `UserDefaults` row creates a `JSONDecoder` per read, as a property getter does.")
        return group

        func measure(_ id: String, _ label: String, _ entries: [Entry]) {
            context.progress("1. property read: \(label)")
            let statistics = Sampler.interleaved(context.settings, entries.map { Sampler.Candidate(body: $0.body) })
            for (entry, stats) in zip(entries, statistics) {
                group.append(ResultRow(id: "\(id).\(entry.variant)", name: entry.name, statistics: stats))
            }
            for entry in entries where entry.variant != "plain" {
                group.relate("\(id).\(entry.variant)", to: "\(id).plain")
            }
        }
    }
}

extension GroupResult {
    mutating func append(contentsOf rows: [ResultRow]) { self.rows.append(contentsOf: rows) }
}
