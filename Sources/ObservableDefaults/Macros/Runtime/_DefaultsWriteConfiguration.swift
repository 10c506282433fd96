extension _DefaultsObjectBinding {
    /// What a property write reads of its object's configuration: the suite, the key prefix, the object's
    /// own suite observer (which its writes skip) and the keys more than one property is mapped to.
    ///
    /// Immutable: a change of the configuration (a custom initializer's `_userDefaults` or `_prefix`, the
    /// start of the observation) builds a new one. The binding publishes the current one with
    /// `_PublishedConfiguration`, so the setter reads it without a lock.
    final class WriteConfiguration: Sendable {
        let suite: DefaultsSuite
        let prefix: String
        let observer: UInt64?
        let sharedKeys: Set<String>

        init(suite: DefaultsSuite, prefix: String, observer: UInt64?, sharedKeys: Set<String>) {
            self.suite = suite
            self.prefix = prefix
            self.observer = observer
            self.sharedKeys = sharedKeys
        }
    }
}
