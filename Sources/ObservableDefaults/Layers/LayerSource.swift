import Foundation
import Synchronization

/// One source of values of a suite's layers other than its file: a file of the managed, system or global
/// layer, values fixed when the suite opens (the arguments, the environment), a key-per-file directory, a
/// cloud store.
///
/// A value: a suite that opens builds no object for its layers. What it reads at open comes from the
/// process's ``LayerListings`` for layer files, and what tells it about changes while it is watched is the
/// ``LayerWatch`` of the source, shared by every suite of the process watching the same file.
struct LayerSource: Sendable {
    enum Kind: Sendable {
        /// A layer file, read again when it changes.
        case file(LayerFile)
        /// Values that do not change while the process runs.
        case fixed([ExactKey: LayerEntry])
        /// A key-per-file directory, read again when anything in it changes.
        case keyPerFile(KeyPerFileDirectory)
        /// A cloud store's keys with a prefix, read again when one of them changes.
        case cloud(CloudKeyValueStore, prefix: String)
        /// Environment variables with the layer's prefix (they do not change while the process runs).
        case environment(EnvironmentLayer, [String: LayerEntry])
    }

    let kind: Kind

    /// The origin told in a ``DefaultsChange`` of this source: its main file, or its layer (worked out
    /// when a change is told: a file URL costs more to make than the rest of opening a layer).
    var changeOrigin: DefaultsOrigin {
        switch kind {
        case .file(let file): file.origin(file.mainURL)
        case .fixed: .argument
        case .keyPerFile(let directory): .keyPerFile(directory.url)
        case .cloud: .cloud
        case .environment(let layer, _): .environment(layer.prefix)
        }
    }

    /// What the suites watching the source share (see ``LayerWatch``); `nil` for one that never changes.
    var watchKey: LayerWatch.Key? {
        switch kind {
        case .file(let file): .file(file.key)
        case .keyPerFile(let directory): .keyPerFile(directory.url.path)
        case .cloud(let store, let prefix): .cloud(ObjectIdentifier(store), prefix: prefix)
        case .fixed, .environment: nil
        }
    }

    /// The sources of `layers` for the suite `name` whose file is at `filePath`, in precedence order, and
    /// how many are above the file.
    static func sources(
        for layers: [DefaultsLayer], name: String, filePath: String, places: LayerPlaces
    ) -> (sources: [LayerSource], fileIndex: Int) {
        var sources: [LayerSource] = []
        sources.reserveCapacity(layers.count + places.directories.system.count)
        var fileIndex = 0
        for layer in layers {
            switch layer {
            case .file:
                fileIndex = sources.count
            case .managed:
                sources.append(
                    LayerSource(kind: .file(LayerFile(.managed, name: name, directory: places.directories.managed))))
            case .system:
                for directory in places.directories.system {
                    sources.append(LayerSource(kind: .file(LayerFile(.system, name: name, directory: directory))))
                }
            case .global:
                let global = LayerFile(.global, name: DefaultsSuite.globalDomain, directory: places.directories.global)
                // The global domain's own suite does not read itself as a layer.
                if name != DefaultsSuite.globalDomain || !global.candidates.contains(filePath) {
                    sources.append(LayerSource(kind: .file(global)))
                }
            case .arguments:
                sources.append(LayerSource(kind: .fixed(ArgumentDomain.processEntries)))
            case .environment(let prefix):
                let environment = EnvironmentLayer(prefix: prefix)
                sources.append(
                    LayerSource(
                        kind: .environment(environment, environment.entries(in: ProcessInfo.processInfo.environment))))
            case .keyPerFile(let directory):
                sources.append(LayerSource(kind: .keyPerFile(KeyPerFileDirectory(url: directory))))
            case .cloud(let store, let prefix):
                sources.append(LayerSource(kind: .cloud(store, prefix: prefix)))
            }
        }
        return (sources, fileIndex)
    }

    /// The paths to watch while a suite reading the source is watched.
    var watchedPaths: [String] {
        switch kind {
        case .file(let file): file.candidates
        // A path ending in `/`: every name in the directory (see ``FileWatcher/registration(file:onEvent:)``).
        case .keyPerFile(let directory): [directory.url.path + "/"]
        case .fixed, .environment, .cloud: []
        }
    }

    /// Whether the source is read again when its files change.
    var isLive: Bool { watchKey != nil }

    /// Reads the source now (an environment layer's values are not keyed: see ``initialValues(listings:)``):
    /// its values, and the files of a key-per-file directory passed over, by name, with why.
    func read() throws(DefaultsError) -> KeyPerFileDirectory.Contents {
        switch kind {
        case .file(let file): KeyPerFileDirectory.Contents(values: try file.read())
        case .keyPerFile(let directory): try directory.read()
        case .fixed(let values): KeyPerFileDirectory.Contents(values: values)
        case .cloud(let store, let prefix): KeyPerFileDirectory.Contents(values: Self.values(of: store, prefix: prefix))
        case .environment: KeyPerFileDirectory.Contents()
        }
    }

    /// The values a cloud store holds (not its registered defaults) under keys starting with `prefix`.
    private static func values(of store: CloudKeyValueStore, prefix: String) -> [ExactKey: LayerEntry] {
        var values: [ExactKey: LayerEntry] = [:]
        for (key, value) in store.core.state.withLock({ $0.values }) where key.hasPrefix(prefix) {
            values[ExactKey(String(key.dropFirst(prefix.count)))] = LayerEntry(value: value, origin: .cloud)
        }
        return values
    }

    /// The source's values when a suite opens, with what a read found wrong: a file that cannot be used
    /// gives no values and its error. A layer file is read through `listings` (see ``LayerFile/read(listings:)``).
    func initialValues(
        listings: LayerListings
    ) -> (SuiteLayers.Source, Result<[String: DefaultsError], DefaultsError>) {
        switch kind {
        case .environment(let layer, let values): return (.environment(layer, values), .success([:]))
        case .fixed(let values): return (.keyed(values), .success([:]))
        case .file(let file):
            do throws(DefaultsError) {
                return (.keyed(try file.read(listings: listings)), .success([:]))
            } catch {
                return (.keyed([:]), .failure(error))
            }
        case .keyPerFile, .cloud:
            do throws(DefaultsError) {
                let contents = try read()
                return (.keyed(contents.values), .success(contents.problems))
            } catch {
                return (.keyed([:]), .failure(error))
            }
        }
    }

    /// Reads the source again, once, and applies what was read to each of `targets` (a suite and the
    /// source's position among its layers), which tell their observers and error handlers after every
    /// lock is released. Reads and applies of one source are serialized (see ``LayerWatch/reading(_:)``),
    /// so versions are applied in the order read. `gate`: see ``WatchEvent/ReadGate``.
    func reload(gate: WatchEvent.ReadGate?, into targets: [(storage: SuiteStorage, index: Int)]) {
        guard let key = watchKey, !targets.isEmpty else { return }
        let applied = LayerWatch.reading(key).withLock { _ -> [SuiteStorage.LayerApplied] in
            let read: Result<KeyPerFileDirectory.Contents, DefaultsError>
            do throws(DefaultsError) {
                read = .success(try self.read())
            } catch {
                read = .failure(error)
            }
            if let gate {
                let suspect =
                    switch read {
                    case .failure: true
                    case .success(let contents): contents.values.isEmpty || !contents.problems.isEmpty
                    }
                if suspect && !gate(true) { return [] }
            }
            return targets.map { $0.storage.applyLayer($0.index, read) }
        }
        guard !applied.isEmpty else { return }
        let origin = changeOrigin
        for change in applied { change.tell(layer: origin) }
        // The targets are released here, after every lock: one may be the last reference to its suite.
        withExtendedLifetime(targets) {}
    }
}
