#if DEBUG
    import Foundation

    // The Apple library's test suite runs its cloud tests in a "test mode" that it switches on through two
    // internal names, reached with `@testable import`: objects then keep their values in a `UserDefaults`
    // suite that the test reads and writes, and an outside change is the test's post of
    // `didChangeExternallyNotification`. The same names here let that suite run unchanged against this package
    // (`.ci/upstream-tests`, `Docs/upstream-tests.md`). Debug builds only; nothing public.

    /// The Apple library's switch for its test mode, under its internal name.
    enum NSUbiquitousKeyValueStoreWrapper {
        /// While `true` (in a task), an `@ObservableCloud` object that is given no store and is not in
        /// development mode uses the store that mirrors the suite ``testSuiteName``.
        @TaskLocal static var isTestEnvironment = false
        /// The suite the test-mode store mirrors (`nil`: ``MockUbiquitousKeyValueStore/suiteName``).
        @TaskLocal static var testSuiteName: String?
    }

    /// The Apple library's name for the suite its test mode uses when none is set.
    enum MockUbiquitousKeyValueStore {
        /// The suite's name.
        static let suiteName = "ObservableDefaults.UpstreamTestMode"
    }

    extension CloudKeyValueStore {
        private static let suiteMirrors = Locked([String: CloudKeyValueStore]())

        /// The store of the Apple library's test mode when the current task is in it: one per suite name, in
        /// memory like the development store, mirrored to the suite (see ``mirroring(_:)``). `nil` outside test
        /// mode, or when the suite cannot be opened.
        static var upstreamTestStore: CloudKeyValueStore? {
            guard NSUbiquitousKeyValueStoreWrapper.isTestEnvironment else { return nil }
            let name = NSUbiquitousKeyValueStoreWrapper.testSuiteName ?? MockUbiquitousKeyValueStore.suiteName
            return suiteMirrors.withLock { mirrors in
                if let store = mirrors[name] { return store }
                guard let suite = DefaultsSuite(suiteName: name) else { return nil }
                let store = mirroring(suite)
                mirrors[name] = store
                return store
            }
        }

        /// A store that starts with `suite`'s stored values and writes each of its own writes into `suite` at
        /// once. A `didChangeExternallyNotification` posted by anything but a store (the test playing iCloud)
        /// makes it read the notification's keys from `suite` again and announce those that changed, with the
        /// notification's reason (a server change when it has none), on the posting thread.
        private static func mirroring(_ suite: DefaultsSuite) -> CloudKeyValueStore {
            var state = CloudState()
            for (key, value) in suite.storedEntries() {
                state.setValue(JSONRepresentation.normalize(value), forKey: key)
            }
            let store = CloudKeyValueStore(
                mode: .development, configuration: nil, state: state, localCopy: nil, limits: .iCloud,
                writeMirror: { key, value in suite.set(value, forKey: key) })
            let core = store.core
            _ = NotificationCenter.default.addObserver(
                forName: didChangeExternallyNotification, object: nil, queue: nil
            ) { notification in
                guard !(notification.object is CloudKeyValueStore),
                    let keys = notification.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String]
                else { return }
                let reason =
                    (notification.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int)
                    .flatMap(CloudChangeReason.init(rawValue:)) ?? .serverChange
                core.change(deliverHere: true) { state in
                    var changed = Set<String>()
                    for key in keys
                    where state.setValue(suite.storedValue(forKey: key).map(JSONRepresentation.normalize), forKey: key)
                    {
                        changed.insert(key)
                    }
                    return (changed, reason)
                }
            }
            return store
        }
    }
#endif
