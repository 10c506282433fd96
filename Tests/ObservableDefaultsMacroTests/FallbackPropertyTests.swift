@testable import ObservableDefaults
import Foundation
import Testing
import TestSupport

/// The invariant behind the fallback rule, checked over generated operation sequences: after every
/// operation, a running object's properties equal what a newly created object on the same suite reads
/// (stored value, else registered default, else declaration default). Wrong-typed stored values are left
/// out on purpose: there a running object keeps its last good value (see `WrongTypedEditTests`).
@Suite struct FallbackPropertyTests {
    enum Operation: CustomStringConvertible {
        case assignLimit(Int?), assignCount(Int), assignLevel(LogLevel)
        case suiteSet(String, DefaultsValue?), register(String, DefaultsValue), outside(String, DefaultsValue?)

        var description: String {
            switch self {
            case .assignLimit(let value): "limit = \(value.map(String.init) ?? "nil")"
            case .assignCount(let value): "count = \(value)"
            case .assignLevel(let value): "level = .\(value)"
            case .suiteSet(let key, let value): "suite.set(\(value.map { "\($0)" } ?? "nil"), \(key))"
            case .register(let key, let value): "register(\(key): \(value))"
            case .outside(let key, let value): "outside(\(key) = \(value.map { "\($0)" } ?? "nil"))"
            }
        }
    }

    static let keys = ["daemon.limit", "daemon.count", "daemon.level"]

    static func value(for key: String, _ random: inout SeededGenerator) -> DefaultsValue {
        key == "daemon.level"
            ? .string(LogLevel.allCases.randomElement(using: &random)!.rawValue)
            : .integer(Int.random(in: 0...3, using: &random))
    }

    static func operation(_ random: inout SeededGenerator) -> Operation {
        let key = keys.randomElement(using: &random)!
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1: return .assignLimit(Bool.random(using: &random) ? nil : Int.random(in: 0...3, using: &random))
        case 2: return .assignCount(Int.random(in: 0...3, using: &random))
        case 3: return .assignLevel(LogLevel.allCases.randomElement(using: &random)!)
        case 4, 5: return .suiteSet(key, Bool.random(using: &random) ? nil : value(for: key, &random))
        case 6, 7: return .register(key, value(for: key, &random))
        default: return .outside(key, Bool.random(using: &random) ? nil : value(for: key, &random))
        }
    }

    @Test func objectAlwaysReadsWhatANewObjectReads() async throws {
        for seed in UInt64(1)...40 {
            var random = SeededGenerator(seed: seed)
            let suite = try makeSuite()
            let model = DaemonSettings(userDefaults: suite)
            let marker = OutsideMarker(suite)
            var history: [Operation] = []
            for _ in 0..<25 {
                let operation = Self.operation(&random)
                history.append(operation)
                switch operation {
                case .assignLimit(let value): model.limit = value
                case .assignCount(let value): model.count = value
                case .assignLevel(let value): model.level = value
                case .suiteSet(let key, let value): suite.set(value, forKey: key)
                case .register(let key, let value): suite.register(defaults: [key: value])
                case .outside(let key, let value):
                    writeOutside(suite, [key: value])
                    #expect(await marker.settle())
                }
                let fresh = DaemonSettings(userDefaults: suite)
                let same = model.limit == fresh.limit && model.count == fresh.count && model.level == fresh.level
                #expect(
                    same,
                    "seed \(seed): after \(history): object reads \(model.limit as Any), \(model.count), \(model.level); a new object \(fresh.limit as Any), \(fresh.count), \(fresh.level)"
                )
                if !same { break }
            }
        }
    }
}
