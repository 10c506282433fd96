import Foundation
import ObservableDefaults

/// Profiling aid for the macro write path (run under `perf record`; not used by the groups):
///
///     macro-set-loop FILE COUNT        COUNT write-through writes of a new value to an @ObservableDefaults property
///     macro-batch-set-loop FILE COUNT [OBJECTS]  the same inside one `performBatchUpdates` (the in-memory
///                                      part only), OBJECTS other objects observing the suite (default 0)
///     cloud-macro-set-loop COUNT [KEYS [OBJECTS]]  COUNT writes of a new value to an @ObservableCloud property
///                                      on the development store (group 9's `write.cloud-macro` row), the store
///                                      first given KEYS other keys (default 0; the `write.cloud-macro.full` row:
///                                      1,000) and OBJECTS other objects, each under its own prefix (default 0)
enum MacroChildModes {
    static func run(_ arguments: [String]) -> Bool {
        switch arguments.first {
        case "macro-set-loop" where arguments.count == 3:
            guard let count = Int(arguments[2]) else { fail("COUNT must be an integer") }
            let object = MacroSettings(userDefaults: openSuite(URL(fileURLWithPath: arguments[1])))
            for index in 0..<count { object.count = index }
            return true
        case "macro-batch-set-loop" where arguments.count == 3 || arguments.count == 4:
            guard let count = Int(arguments[2]), let objects = integerArgument(arguments, at: 3) else {
                fail("COUNT and OBJECTS must be integers")
            }
            let suite = openSuite(URL(fileURLWithPath: arguments[1]))
            let others = MacroRows.otherObjects(on: suite, count: objects)
            let object = MacroSettings(userDefaults: suite)
            suite.performBatchUpdates {
                for index in 0..<count { object.count = index }
            }
            withExtendedLifetime(others) {}
            return true
        case "cloud-macro-set-loop" where (2...4).contains(arguments.count):
            guard let count = Int(arguments[1]), let keys = integerArgument(arguments, at: 2),
                let objects = integerArgument(arguments, at: 3)
            else { fail("COUNT, KEYS and OBJECTS must be integers") }
            CloudBenchmarks.fillDevelopmentStore(keys)
            let others = (0..<objects).map { CloudWriteSettings(prefix: "other\($0).", store: .development) }
            let object = CloudWriteSettings(store: .development)
            for index in 0..<count { object.count = index }
            withExtendedLifetime(others) {}
            return true
        default:
            return false
        }
    }
}
