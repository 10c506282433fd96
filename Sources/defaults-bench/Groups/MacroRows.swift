import Foundation
import ObservableDefaults

/// Every row that needs the `@ObservableDefaults` macro lives in this file, so adding them when the macros
/// land touches one place.
///
/// Until then (the macros are built on branch `macros` and have not reached `main`), each function returns
/// rows marked "not measured" so the tables show what is missing instead of silently omitting it.
enum MacroRows {
    static let isAvailable = false
    static let missingReason = "`@ObservableDefaults` not on main yet (branch `macros`)"

    /// Group 1: the property read through the macro's in-memory copy. Row id: `<type>.macro`.
    static func propertyRead(_ context: BenchContext, id: String) -> [ResultRow] {
        let names = ["string": "String", "int": "Int", "enum": "enum", "codable": "Codable struct"]
        return [.missing(id: "\(id).macro", name: "\(names[id] ?? id): `@ObservableDefaults` property", reason: missingReason)]
    }

    /// Group 2: the property write through the macro (write-through, and inside a batch).
    static func propertyWrite(_ context: BenchContext) -> [ResultRow] {
        [.missing(id: "macro.writethrough", name: "`@ObservableDefaults` property write-through", reason: missingReason),
         .missing(id: "macro.batch", name: "`@ObservableDefaults` property inside a batch", reason: missingReason)]
    }

    /// Group 3: an `@ObservableDefaults` class with `count` properties; one key changes on disk; time until
    /// Observation reports that property. Subject id: `n<count>.macro`.
    static func fanOutSubjects(_ context: BenchContext, count: Int, text: GeneratedSuiteText) -> [FanOutSubject] {
        []
    }

    /// Group 3 rows while the macros are missing.
    static func missingFanOutRows(count: Int) -> [ResultRow] {
        [.missing(id: "n\(count).macro", name: "N=\(count): `@ObservableDefaults` class, Observation of the changed property", reason: missingReason)]
    }

    /// Group 5: a hand edit until an `@ObservableDefaults` property changes; `nil` while the macros are missing.
    static func handEditSide(_ context: BenchContext, paddingKeys: Int) -> LatencySide? { nil }

    /// Group 5 rows while the macros are missing. Row id: `macro`.
    static func missingHandEditRows() -> [ResultRow] {
        [.missing(id: "macro", name: "`@ObservableDefaults` property changes (Observation `onChange`)", reason: missingReason)]
    }
}
