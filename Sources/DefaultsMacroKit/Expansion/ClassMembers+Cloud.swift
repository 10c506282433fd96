// The members only `@ObservableCloud` generates.
extension ObservableCloudOptions {
    /// The generated members of an `@ObservableCloud` class: registrar, binding, the Apple library's
    /// `_prefix`, `_syncImmediately`, `_developmentMode`, `_developmentMode_`, `_cloudObserver` and
    /// `CloudObservation`, the Linux addition `_cloudStore`, the slots and their checks, the initializer,
    /// `update`, `performBatchUpdates` and `_od_startCloudObservation`.
    ///
    /// Observation is started by creating a `CloudObservation` (as on Apple platforms, so a custom initializer
    /// writes the same line); it holds the binding's observation token for as long as the object lives.
    /// `_cloudObserver` is the only stored `var`: `nonisolated(unsafe)` lets a `Sendable` class compile (it is
    /// set in the initializer and never read), as every other generated stored property is a `let`.
    func memberText(_ context: ClassExpansion.Context) -> String {
        let access = ClassExpansion.accessModifier(context.type)
        let selfType = context.type.name
        let isolation = context.hasMainActorAttribute ? "@MainActor " : ""
        var blocks = [
            """
            private let _od_registrar = Observation::ObservationRegistrar()

            private let _od_binding = ObservableDefaults::_CloudObjectBinding(prefix: \(StringLiteral.quote(prefix ?? "")), syncImmediately: \(syncImmediately), developmentMode: \(developmentMode), mainActor: \(context.isMainActor))

            private var _prefix: Swift::String {
                get { _od_binding.prefix }
                set { _od_binding.configure(prefix: newValue) }
            }

            private var _syncImmediately: Swift::Bool {
                get { _od_binding.syncImmediately }
                set { _od_binding.configure(syncImmediately: newValue) }
            }

            private var _developmentMode: Swift::Bool {
                get { _od_binding.developmentModeRequested }
                set { _od_binding.configure(developmentMode: newValue) }
            }

            \(access)var _developmentMode_: Swift::Bool { _od_binding.isDevelopmentMode }

            private var _cloudStore: ObservableDefaults::CloudKeyValueStore {
                get { _od_binding.store }
                set { _od_binding.configure(store: newValue) }
            }

            nonisolated(unsafe) private var _cloudObserver: CloudObservation? = nil

            private final class CloudObservation {
                private let observation: ObservableDefaults::DefaultsObservation?
                \(isolation)init(host: \(selfType), prefix: Swift::String) {
                    host._od_binding.configure(prefix: prefix)
                    observation = host._od_startCloudObservation()
                }
            }
            """
        ]
        let properties = ClassExpansion.persistedProperties(context)
        let slots = ClassExpansion.slotDeclarations(context, properties)
        let slotText = slots.slots.joined()
        if !slotText.isEmpty { blocks.append(String(slotText.dropLast())) }
        if let checks = slots.checks { blocks.append(checks) }
        if ClassExpansion.generatesInit(context) {
            blocks.append(
                """
                \(access)init(prefix: Swift::String? = nil, syncImmediately: Swift::Bool = \(syncImmediately), developmentMode: Swift::Bool = \(developmentMode), store: ObservableDefaults::CloudKeyValueStore? = nil) {
                    _od_binding.configure(prefix: prefix, syncImmediately: syncImmediately, developmentMode: developmentMode, store: store)
                    _cloudObserver = CloudObservation(host: self, prefix: _prefix)
                }
                """)
        }
        blocks.append(
            """
            /// Atomically replaces the value of a persisted property across every machine sharing the store:
            /// `transform` gets the value the store holds (the default when the key is absent) and returns the
            /// new one (`nil` on an Optional removes the key); when another machine changed the key first, it
            /// runs again on the server's value. Offline it applies at once and runs again at upload. It may run
            /// more than once, on another thread, and should only compute. Observers hear one change.
            /// - Returns: the value stored.
            @discardableResult
            \(access)func update<_od_Value>(_ keyPath: Swift::ReferenceWritableKeyPath<\(selfType), _od_Value>, _ transform: @escaping @Sendable (_od_Value) throws -> _od_Value) throws -> _od_Value {
                try _od_binding.update(keyPath, of: self, transform)
            }

            /// Runs `body` and uploads the writes made meanwhile to the object's store in one transaction (see
            /// `CloudKeyValueStore.performBatchUpdates(_:)`): other machines see them all at once or none.
            \(access)func performBatchUpdates<_od_Result>(_ body: () throws -> _od_Result) rethrows -> _od_Result {
                try _od_binding.store.performBatchUpdates(body)
            }
            """)
        blocks.append(
            """
            private func _od_startCloudObservation() -> ObservableDefaults::DefaultsObservation? {
                let _od_properties = ObservableDefaults::_CloudPropertyList()
            \(ClassExpansion.registrationLines(context, properties))    return _od_binding.start(_od_properties, isolation: #isolation)
            }
            """)
        return blocks.joined(separator: "\n\n")
    }
}
