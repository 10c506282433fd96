import Foundation

// The search list: where a value comes from, forced keys, the global domain, and `UserDefaults`' domain names.
extension DefaultsSuite {
    /// Where the effective value of `key` comes from: the layer (and its file or variable), or
    /// ``DefaultsOrigin/registered``; `nil` when no layer has the key and it has no registered default.
    ///
    /// ```swift
    /// suite.origin(forKey: "port")   // .system(/etc/xdg/observable-defaults/app.json)
    /// ```
    public func origin(forKey key: String) -> DefaultsOrigin? {
        storage.origin(forKey: key)
    }

    /// Whether an administrator forces `key` (the managed layer has it), like
    /// `UserDefaults.objectIsForced(forKey:)`: a write of it is refused and reported
    /// (``DefaultsError/Kind/forcedKey``), and it keeps its forced value.
    public func objectIsForced(forKey key: String) -> Bool {
        storage.isForced(key)
    }

    /// The directory of the managed layer's files, as the environment places it now:
    /// `$OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY`, else `/etc/observable-defaults/managed`.
    public static var managedDirectory: URL { LayerPlaces.current().managedDirectory }

    /// The directories of the system layer's files, as the environment places them now, highest first:
    /// `observable-defaults` in each directory of `$XDG_CONFIG_DIRS`, else `/etc/xdg/observable-defaults`.
    ///
    /// A suite file created in one of them or in ``managedDirectory`` (`defaults write --system` and
    /// `--managed` do so, as root) gets mode 0644 and a directory made for it 0755: every user's programs
    /// read those layers, and the trust rule accepts the file.
    public static var systemDirectories: [URL] { LayerPlaces.current().systemDirectories }

    /// The global domain's name: the file `NSGlobalDomain.json` in ``defaultDirectory``.
    public static let globalDomain = "NSGlobalDomain"
    /// The argument domain's name (the ``DefaultsLayer/arguments`` layer).
    public static let argumentDomain = "NSArgumentDomain"
    /// The registration domain's name (registered defaults).
    public static let registrationDomain = "NSRegistrationDomain"

    /// The global domain, shared by every suite that reads through ``DefaultsLayer/global``: the suite
    /// `NSGlobalDomain` in ``defaultDirectory`` (Apple's `NSGlobalDomain`; the tool's `-g`), read through
    /// the standard layers but itself. If it cannot be opened, a suite kept in memory is used and the reason
    /// is published on its error channel.
    public static let global: DefaultsSuite = {
        do throws(DefaultsError) {
            return try DefaultsSuite(name: globalDomain, layers: [.managed, .arguments, .file, .system])
        } catch {
            let suite = try! DefaultsSuite(fileURL: URL(fileURLWithPath: "/dev/null"), layers: [.file])
            suite.storage.report(error)
            return suite
        }
    }()

    /// The values of a layer by its `UserDefaults` domain name: ``argumentDomain`` (the process's `-key value`
    /// arguments), ``registrationDomain`` (this suite's registered defaults), ``globalDomain`` (the global
    /// domain's file), or the file of the suite of that name in this suite's directory; `nil` when that
    /// suite's name is invalid.
    public func persistentDomain(forName domainName: String) -> [String: Any]? {
        switch domainName {
        case Self.argumentDomain:
            return ArgumentDomain.process.values.stringKeyed.mapValues(\.foundationObject)
        case Self.registrationDomain:
            return registeredDefaults.mapValues(\.foundationObject)
        case Self.globalDomain:
            return Self.global.storedEntries().reduce(into: [:]) { $0[$1.key] = $1.value.foundationObject }
        case name:
            return storedEntries().reduce(into: [:]) { $0[$1.key] = $1.value.foundationObject }
        default:
            let suite = try? DefaultsSuite(
                name: domainName, directory: fileURL.deletingLastPathComponent(), layers: [.file])
            return suite?.storedEntries().reduce(into: [:]) { $0[$1.key] = $1.value.foundationObject }
        }
    }

    /// `UserDefaults.volatileDomain(forName:)`: the argument domain's values for ``argumentDomain``, the
    /// registered defaults for ``registrationDomain``, else none (a suite keeps no other volatile domain).
    public func volatileDomain(forName domainName: String) -> [String: Any] {
        switch domainName {
        case Self.argumentDomain: ArgumentDomain.process.values.stringKeyed.mapValues(\.foundationObject)
        case Self.registrationDomain: registeredDefaults.mapValues(\.foundationObject)
        default: [:]
        }
    }
}
