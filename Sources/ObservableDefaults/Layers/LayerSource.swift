import Foundation

/// One source of values of a suite's layers other than its file: a file of the managed, system or global
/// layer (live: watched with the suite's file), or values fixed when the suite opens (the arguments, the
/// environment).
final class LayerSource: Sendable {
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
    /// Its position in ``SuiteLayers`` (highest first).
    let index: Int
    /// The origin told in a ``DefaultsChange`` of this source (its main file, or its layer); worked out when
    /// a change is told (a file URL costs more to make than the rest of opening a layer).
    private let origin: @Sendable () -> DefaultsOrigin

    /// The origin told in a ``DefaultsChange`` of this source.
    var changeOrigin: DefaultsOrigin { origin() }
    /// Serializes reading the source and applying what was read, so versions are applied in the order read.
    let reading = Locked(())

    init(kind: Kind, index: Int, changeOrigin: @escaping @Sendable () -> DefaultsOrigin) {
        self.kind = kind
        self.index = index
        origin = changeOrigin
    }

    /// The sources of `layers` for the suite `name` whose file is at `filePath`, in precedence order, and
    /// how many are above the file.
    static func sources(
        for layers: [DefaultsLayer], name: String, filePath: String, places: LayerPlaces
    ) -> (sources: [LayerSource], fileIndex: Int) {
        var sources: [LayerSource] = []
        var fileIndex = 0
        func add(_ kind: Kind, _ origin: @escaping @Sendable () -> DefaultsOrigin) {
            sources.append(LayerSource(kind: kind, index: sources.count, changeOrigin: origin))
        }
        for layer in layers {
            switch layer {
            case .file:
                fileIndex = sources.count
            case .managed:
                let file = LayerFile(name: name, directory: places.paths.managed, checksTrust: true) { .managed($0) }
                add(.file(file)) { .managed(file.mainURL) }
            case .system:
                for directory in places.paths.system {
                    let file = LayerFile(name: name, directory: directory, checksTrust: true) { .system($0) }
                    add(.file(file)) { .system(file.mainURL) }
                }
            case .global:
                let file = LayerFile(
                    name: DefaultsSuite.globalDomain, directory: places.paths.global, checksTrust: false
                ) { .global($0) }
                // The global domain's own suite does not read itself as a layer.
                if !file.candidates.contains(filePath) {
                    add(.file(file)) { .global(file.mainURL) }
                }
            case .arguments:
                add(.fixed(ArgumentDomain.process.entries)) { .argument }
            case .environment(let prefix):
                let environment = EnvironmentLayer(prefix: prefix)
                add(
                    .environment(environment, environment.entries(in: ProcessInfo.processInfo.environment)),
                    { .environment(prefix) })
            case .keyPerFile(let directory):
                add(.keyPerFile(KeyPerFileDirectory(url: directory))) { .keyPerFile(directory) }
            case .cloud(let store, let prefix):
                add(.cloud(store, prefix: prefix)) { .cloud }
            }
        }
        return (sources, fileIndex)
    }

    /// The paths to watch while the suite is watched.
    var watchedPaths: [String] {
        switch kind {
        case .file(let file): file.paths
        // A path ending in `/`: every name in the directory (see ``FileWatcher/registration(file:onEvent:)``).
        case .keyPerFile(let directory): [directory.url.path + "/"]
        case .fixed, .environment, .cloud: []
        }
    }

    /// Whether the source is read again when its files change.
    var isLive: Bool {
        switch kind {
        case .file, .keyPerFile, .cloud: true
        case .fixed, .environment: false
        }
    }

    /// Reads the source now (an environment layer's values are not keyed: see ``initialValues()``): its
    /// values, and the files of a key-per-file directory passed over, by name, with why.
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

    /// The source's values when the suite opens, with what a read found wrong: a file that cannot be used
    /// gives no values and its error. A layer file known absent in `absence` is not opened.
    func initialValues(
        absence: LayerFileAbsence
    ) -> (SuiteLayers.Source, Result<[String: DefaultsError], DefaultsError>) {
        if case .environment(let layer, let values) = kind { return (.environment(layer, values), .success([:])) }
        do throws(DefaultsError) {
            let contents: KeyPerFileDirectory.Contents
            if case .file(let file) = kind {
                contents = KeyPerFileDirectory.Contents(values: try file.read(absence: absence))
            } else {
                contents = try read()
            }
            return (.keyed(contents.values), .success(contents.problems))
        } catch {
            return (.keyed([:]), .failure(error))
        }
    }
}
