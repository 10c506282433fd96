import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// The search list: which layer's value a read returns, where it comes from, what stays the file's alone.
@Suite struct LayerPrecedenceTests {
    let layers = LayerFixture()

    @Test func eachKeyReadsTheHighestLayerThatHasIt() throws {
        let managed = try layers.write(#"{"forced": "admin"}"#, "app", in: layers.managed)
        let first = try layers.write(#"{"forced": "sys1", "port": 80, "host": "sys1"}"#, "app", in: layers.system[0])
        try layers.write(#"{"host": "sys2", "depth": 2}"#, "app", in: layers.system[1])
        let second = layers.system[1].appendingPathComponent("app.json")
        let global = try layers.write(#"{"depth": 9, "locale": "fr"}"#, "NSGlobalDomain", in: layers.global)
        try layers.write(#"{"port": 8080}"#, "app", in: layers.suites)
        let suite = try layers.suite("app")
        suite.register(defaults: ["locale": .string("en"), "theme": .string("dark")])

        #expect(suite.value(forKey: "forced") == .string("admin"))
        #expect(suite.value(forKey: "port") == .integer(8080), "the file is above the system files")
        #expect(suite.value(forKey: "host") == .string("sys1"), "the first system directory with the key wins")
        #expect(suite.value(forKey: "depth") == .integer(2), "a system file is above the global domain")
        #expect(suite.value(forKey: "locale") == .string("fr"), "the global domain is above registered defaults")
        #expect(suite.value(forKey: "theme") == .string("dark"))
        #expect(suite.integer(forKey: "depth") == 2)
        #expect(suite.string(forKey: "forced") == "admin")

        #expect(suite.origin(forKey: "forced") == .managed(managed))
        #expect(suite.origin(forKey: "port") == .file(suite.fileURL))
        #expect(suite.origin(forKey: "host") == .system(first))
        #expect(suite.origin(forKey: "depth") == .system(second))
        #expect(suite.origin(forKey: "locale") == .global(global))
        #expect(suite.origin(forKey: "theme") == .registered)
        #expect(suite.origin(forKey: "missing") == nil)

        // The file's own accessors keep meaning the file.
        #expect(suite.storedValue(forKey: "host") == nil)
        #expect(suite.storedKeys == ["port"])
        #expect(suite.storedEntries().map(\.key) == ["port"])
        let merged = suite.values()
        #expect(merged["forced"] == .string("admin") && merged["host"] == .string("sys1"))
        #expect(merged["depth"] == .integer(2) && merged["locale"] == .string("fr") && merged["port"] == .integer(8080))
        #expect(suite.dictionaryRepresentation().count == merged.count)
        #expect(suite.objectIsForced(forKey: "forced") && !suite.objectIsForced(forKey: "port"))
    }

    @Test func aSuiteWithOnlyItsFileReadsNoLayer() throws {
        try layers.write(#"{"host": "sys1"}"#, "plain", in: layers.system[0])
        let suite = try layers.suite("plain", layers: [.file])
        #expect(suite.value(forKey: "host") == nil)
        #expect(suite.layers == [.file])
    }

    @Test func theLayerListMustHoldTheFileExactlyOnce() {
        for bad: [DefaultsLayer] in [[.managed, .system], [.file, .arguments, .file], [.file, .system, .system]] {
            #expect {
                _ = try DefaultsSuite(name: "bad-layers", directory: layers.suites, layers: bad)
            } throws: { ($0 as? DefaultsError)?.kind == .invalidLayers }
        }
        #expect(throws: Never.self) {
            _ = try DefaultsSuite(name: "good-layers", directory: layers.suites, layers: [.system, .file])
        }
    }

    @Test func layerFilesAreReadInTheTestEnvironmentNotInEtc() throws {
        // TestEnvironment points both variables at temporary directories before any test runs.
        let places = LayerPlaces.current()
        #expect(!places.managedDirectory.path.hasPrefix("/etc"))
        #expect(!places.systemDirectories.contains { $0.path.hasPrefix("/etc") })
        let name = "env-placed-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(at: places.systemDirectories[0], withIntermediateDirectories: true)
        let url = try layers.write(#"{"answer": 42}"#, name, in: places.systemDirectories[0])
        defer { try? FileManager.default.removeItem(at: url) }
        let suite = try DefaultsSuite(name: name, directory: layers.suites)
        #expect(suite.value(forKey: "answer") == .integer(42))
        #expect(suite.origin(forKey: "answer") == .system(url))
    }
}

/// Files an administrator writes into the managed and system layers (`defaults write --system`) are made
/// readable by every user; a user's suite stays private.
@Suite struct SharedLayerFileTests {
    let layers = LayerFixture()

    private func mode(_ url: URL) -> UInt32 {
        (try? FileStatus(path: url.path)).map(\.permissions) ?? 0
    }

    @Test func aNewFileInASystemDirectoryIsReadableByAllAndTrusted() throws {
        let places = LayerPlaces.current()
        let directory = places.systemDirectories[0]
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let name = "shared-\(UInt32.random(in: 0 ... .max))"
        let writer = try DefaultsSuite(name: name, directory: directory, layers: [.file])
        defer { try? FileManager.default.removeItem(at: writer.fileURL) }
        writer.set(4, forKey: "workers")
        try writer.flush()
        #expect(mode(writer.fileURL) == 0o644)

        let reader = try DefaultsSuite(name: name, directory: layers.suites)
        #expect(reader.value(forKey: "workers") == .integer(4), "the trust rule accepts the file")
        #expect(reader.origin(forKey: "workers") == .system(writer.fileURL))
        #expect(reader.currentErrors.isEmpty)

        let own = try DefaultsSuite(name: name, directory: layers.suites, layers: [.file])
        own.set(1, forKey: "workers")
        try own.flush()
        #expect(mode(own.fileURL) == 0o600, "a user's suite stays private")
    }

    @Test func layerDirectoriesAndTheirParentsAreMadeOpenOthersPrivate() {
        let places = LayerPlaces.current()
        let system = places.systemDirectories[0].path
        let parent = places.systemDirectories[0].deletingLastPathComponent().path
        #expect(LayerPlaces.isSharedLayerDirectory(system))
        #expect(LayerPlaces.isSharedLayerDirectory(places.managedDirectory.path))
        #expect(!LayerPlaces.isSharedLayerDirectory(parent))
        #expect(LayerPlaces.leadsToSharedLayerDirectory(parent))
        #expect(!LayerPlaces.leadsToSharedLayerDirectory(layers.suites.path))
        #expect(!LayerPlaces.isSharedLayerDirectory(places.globalDirectory.path))
        #expect(SuiteFileIO.newFilePermissions(in: system) == 0o644)
        #expect(SuiteFileIO.newFilePermissions(in: layers.suites.path) == 0o600)
    }
}
