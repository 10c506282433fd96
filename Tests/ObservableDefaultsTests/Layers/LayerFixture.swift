import Foundation
@testable import ObservableDefaults
import TestSupport

/// A suites directory with layer directories of its own (managed, two system directories, the global
/// domain's), so a test places layer files without touching the process's environment.
final class LayerFixture: Sendable {
    let directory = TemporaryDirectory()

    var suites: URL { directory.file("suites") }
    var managed: URL { directory.file("managed") }
    var system: [URL] { [directory.file("xdg1/observable-defaults"), directory.file("xdg2/observable-defaults")] }
    var global: URL { directory.file("global") }

    init() {
        for url in [suites, managed, global] + system {
            try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
    }

    var places: LayerPlaces {
        LayerPlaces(managedDirectory: managed, systemDirectories: system, globalDirectory: global)
    }

    /// The suite `name` in ``suites`` read through `layers` placed in this fixture's directories.
    func suite(_ name: String, layers: [DefaultsLayer] = DefaultsLayer.standard) throws -> DefaultsSuite {
        DefaultsSuite(
            storage: try SuiteStorage(
                fileURL: suites.appendingPathComponent(name + ".json"), format: .json, layers: layers, places: places))
    }

    /// Writes `json` to `file` in `directory` as an editor does (a temporary file renamed over it).
    @discardableResult
    func write(_ json: String, _ name: String, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent(name + ".json")
        try HandEdit.renameOver(url, json)
        return url
    }

    /// The suite file's contents as JSON text (empty when there is none).
    func fileText(_ name: String) -> String {
        (try? String(contentsOf: suites.appendingPathComponent(name + ".json"), encoding: .utf8)) ?? ""
    }
}
