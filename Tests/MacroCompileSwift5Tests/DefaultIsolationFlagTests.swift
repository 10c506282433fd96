// Runs the classes of `DefaultIsolationFlagClasses.swift` (`defaultIsolationIsMainActor: true`): a write is
// read back and stored, and a change from outside (another process's write of the suite's file, another
// machine's cloud change) reaches the property on the main queue. Compiled in Swift 5 language mode here,
// and through symbolic links in Swift 6 (`ObservableDefaultsMacroTests`) and with default isolation
// `MainActor` (`DefaultIsolationMacroTests`). Suites live in a fresh directory under the temporary directory
// the test environment sets up (`TestEnvironment`), never in the user's home.
import Foundation
import ObservableDefaults
import Testing
import TestSupport

/// A suite in a directory of its own, removed when the directory is released.
private func makeFlagSuite() throws -> (suite: DefaultsSuite, directory: TemporaryDirectory) {
    let directory = TemporaryDirectory("flag")
    return (try DefaultsSuite(name: "flag", directory: directory.url), directory)
}

private func uniqueFlagPrefix() -> String { "flag-\(UUID().uuidString)." }

@Suite struct DefaultIsolationFlagTests {
    @Test func defaultsWithoutMainActorAttribute() async throws {
        let (suite, directory) = try makeFlagSuite()
        defer { withExtendedLifetime(directory) {} }
        let settings = FlagDefaults(userDefaults: suite)
        settings.count = 1
        settings.name = "written"
        #expect(settings.count == 1 && settings.name == "written")
        #expect(suite.integer(forKey: "count") == 1 && suite.string(forKey: "name") == "written")
        try HandEdit.renameOver(suite.fileURL, #"{ "count" : 2, "name" : "outside" }"#)
        // The two keys are applied one after the other on the main queue: read from this thread, `count`'s
        // didSet can come before `name` has its new value.
        #expect(await eventually { settings.log.entries.count == 2 && settings.name == "outside" })
        #expect(settings.count == 2 && settings.log.entries.count == 2)
        #expect(settings.log.entries.last == true, "the outside change is applied on the main queue")
    }

    @MainActor
    @Test func defaultsWithMainActorAttribute() async throws {
        let (suite, directory) = try makeFlagSuite()
        defer { withExtendedLifetime(directory) {} }
        let settings = FlagMainActorDefaults(userDefaults: suite)
        settings.count = 1
        #expect(settings.count == 1 && suite.integer(forKey: "count") == 1)
        try HandEdit.renameOver(suite.fileURL, #"{ "count" : 2 }"#)
        #expect(await eventually { settings.count == 2 })
        #expect(settings.log.entries == [true, true])
    }

    @Test func defaultsWithCustomInitializers() async throws {
        let (suite, directory) = try makeFlagSuite()
        defer { withExtendedLifetime(directory) {} }
        let custom = FlagDefaultsCustomInit(suite: suite)
        custom.count = 3
        #expect(suite.integer(forKey: "custom.count") == 3)
        try HandEdit.renameOver(suite.fileURL, #"{ "custom.count" : 4, "count" : 5 }"#)
        #expect(await eventually { custom.count == 4 })
        let onMainActor = await MainActor.run { () -> Int in
            let settings = FlagMainActorDefaultsCustomInit(suite: suite)
            settings.transient = 9
            return settings.count
        }
        #expect(onMainActor == 5)
        #expect(suite.object(forKey: "transient") == nil, "observeFirst: only @DefaultsBacked is stored")
    }

    @Test func cloudWithoutMainActorAttribute() async throws {
        let prefix = uniqueFlagPrefix()
        let fleet = FlagCloud(prefix: prefix, developmentMode: true)
        fleet.count = 1
        fleet.name = "written"
        #expect(fleet.count == 1 && fleet.name == "written")
        #expect(fleet.storeInUse.longLong(forKey: prefix + "count") == 1)
        try fleet.storeInUse.simulateExternalChange([prefix + "count": .integer(2), prefix + "name": .string("outside")]
        )
        #expect(await eventually { fleet.log.entries.count == 2 && fleet.name == "outside" })
        #expect(fleet.count == 2 && fleet.log.entries.count == 2)
        #expect(fleet.log.entries.last == true, "the outside change is applied on the main queue")
    }

    @MainActor
    @Test func cloudWithMainActorAttribute() async throws {
        let prefix = uniqueFlagPrefix()
        let fleet = FlagMainActorCloud(prefix: prefix, developmentMode: true)
        fleet.count = 1
        #expect(fleet.count == 1 && fleet.storeInUse.longLong(forKey: prefix + "count") == 1)
        try fleet.storeInUse.simulateExternalChange([prefix + "count": .integer(2)])
        #expect(await eventually { fleet.count == 2 })
        #expect(fleet.log.entries == [true, true])
    }

    @Test func cloudWithCustomInitializers() async throws {
        let prefix = uniqueFlagPrefix()
        let custom = FlagCloudCustomInit(prefix: prefix)
        custom.count = 3
        #expect(custom.storeInUse.longLong(forKey: prefix + "count") == 3)
        try custom.storeInUse.simulateExternalChange([prefix + "count": .integer(4)])
        #expect(await eventually { custom.count == 4 })
        let (onMainActor, transientStored) = await MainActor.run { () -> (Int, DefaultsValue?) in
            // Development mode from the macro's argument: a store of the object's own, so its declaration.
            let fleet = FlagMainActorCloudCustomInit(prefix: prefix)
            fleet.transient = 9
            fleet.count = 5
            return (
                fleet.storeInUse.longLong(forKey: prefix + "count") == 5 ? fleet.count : -1,
                fleet.storeInUse.value(forKey: prefix + "transient")
            )
        }
        #expect(onMainActor == 5)
        #expect(transientStored == nil, "observeFirst: only @CloudBacked is stored")
    }

    @MainActor
    @Test func theCompileOnlyUsesRun() throws {
        let (suite, directory) = try makeFlagSuite()
        defer { withExtendedLifetime(directory) {} }
        let prefix = uniqueFlagPrefix()
        #expect(useFlagClasses(suite: suite, prefix: prefix) == 6)
        #expect(useMainActorFlagClasses(suite: suite, prefix: prefix + "main.") == 4)
    }
}
