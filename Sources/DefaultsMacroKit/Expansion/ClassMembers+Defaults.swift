// The members only `@ObservableDefaults` generates.
extension ObservableDefaultsOptions {
    /// The generated members of an `@ObservableDefaults` class: registrar, binding, `_userDefaults`,
    /// `_prefix`, `_isExternalNotificationDisabled`, the initializer, the slots and their checks, `observerStarter`,
    /// `update` and `performBatchUpdates`.
    func memberText(_ context: ClassExpansion.Context) -> String {
        let access = ClassExpansion.accessModifier(context.type)
        let selfType = context.type.name
        let suite = suiteName.map(StringLiteral.quote) ?? "nil"
        let prefix = StringLiteral.quote(prefix ?? "")
        var text = """
            private let _od_registrar = Observation::ObservationRegistrar()

            private let _od_binding = ObservableDefaults::_DefaultsObjectBinding(suiteName: \(suite), prefix: \(prefix), ignoreExternalChanges: \(ignoreExternalChanges), limitToInstance: \(limitToInstance), mainActor: \(context.isMainActor))

            private var _userDefaults: ObservableDefaults::DefaultsSuite {
                get { _od_binding.suite }
                set { _od_binding.configure(suite: newValue, ignoreExternalChanges: nil, prefix: nil) }
            }

            private var _prefix: Swift::String {
                get { _od_binding.prefix }
                set { _od_binding.configure(suite: nil, ignoreExternalChanges: nil, prefix: newValue) }
            }

            private var _isExternalNotificationDisabled: Swift::Bool {
                get { _od_binding.ignoresExternalChanges }
                set { _od_binding.configure(suite: nil, ignoreExternalChanges: newValue, prefix: nil) }
            }

            """
        if ClassExpansion.generatesInit(context) {
            text += """

                \(access)init(userDefaults: ObservableDefaults::DefaultsSuite? = nil, ignoreExternalChanges: Swift::Bool? = nil, prefix: Swift::String? = nil, ignoredKeyPathsForExternalUpdates: [Swift::PartialKeyPath<\(selfType)>] = []) {
                    _od_binding.configure(suite: userDefaults, ignoreExternalChanges: ignoreExternalChanges, prefix: prefix)
                    observerStarter(observableKeysBlacklist: ignoredKeyPathsForExternalUpdates)
                }

                """
        }
        let properties = ClassExpansion.persistedProperties(context)
        let slots = ClassExpansion.slotDeclarations(context, properties)
        for slot in slots.slots {
            text += "\n" + slot
        }
        if let checks = slots.checks { text += "\n" + checks + "\n" }
        let body =
            "    let _od_properties = ObservableDefaults::_DefaultsPropertyList()\n"
            + ClassExpansion.registrationLines(context, properties)
            + "    _od_binding.start(_od_properties, ignoring: observableKeysBlacklist.map { $0 as Swift::AnyKeyPath }, isolation: #isolation)\n"
        text += """

            \(access)func observerStarter(observableKeysBlacklist: [Swift::PartialKeyPath<\(selfType)>] = []) {
            \(body)}

            /// Atomically replaces the value of a persisted property, across processes: `transform` gets the value
            /// the suite holds (read under its cross-process lock; the default when the key is absent) and returns
            /// the new one (`nil` on an Optional removes the key). It may run more than once and must not use the
            /// suite. Observers hear the change once, as for an assignment.
            /// - Returns: the value `transform` returned.
            @discardableResult
            \(access)func update<_od_Value>(_ keyPath: Swift::ReferenceWritableKeyPath<\(selfType), _od_Value>, _ transform: (_od_Value) throws -> _od_Value) throws -> _od_Value {
                try _od_binding.update(keyPath, of: self, transform)
            }

            /// Runs `body` and writes the changes made meanwhile to the object's suite in one file write (see
            /// `DefaultsSuite.performBatchUpdates(_:)`); observers still hear each change at once.
            \(access)func performBatchUpdates<_od_Result>(_ body: () throws -> _od_Result) rethrows -> _od_Result {
                try _od_binding.suite.performBatchUpdates(body)
            }
            """
        return text
    }
}
