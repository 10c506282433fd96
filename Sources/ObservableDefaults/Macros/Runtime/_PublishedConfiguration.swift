import Synchronization

/// What a binding's property writes read of its configuration, published so that the setter reads it
/// without taking the binding's lock; both macro families use one.
///
/// `Configuration` is immutable: a change of the configuration withdraws the published one (holding the
/// binding's lock), and the next write builds and publishes a new one (holding it too, after looking again).
/// Every published configuration is kept as long as the binding, so a write that loaded one just before it
/// was withdrawn still uses a live object (one more per change of the configuration: a handful), and a
/// property write, which runs while its object holds the binding, uses one without counting a reference
/// (``publishedUnretained``).
struct _PublishedConfiguration<Configuration: AnyObject & Sendable>: ~Copyable, Sendable {
    private let current = Atomic<Unmanaged<Configuration>?>(nil)
    private let kept = Locked<[Configuration]>([])

    init() {}

    /// The published configuration, read without a lock; `nil` after a withdrawal, until the next publish.
    var published: Configuration? {
        current.load(ordering: .acquiring)?.takeUnretainedValue()
    }

    /// The published configuration without a reference counted: it lives as long as the binding (`kept`).
    var publishedUnretained: Unmanaged<Configuration>? {
        current.load(ordering: .acquiring)
    }

    /// Publishes `configuration` (called holding the binding's lock) and returns it.
    func publish(_ configuration: Configuration) -> Configuration {
        kept.withLock { $0.append(configuration) }
        current.store(Unmanaged.passUnretained(configuration), ordering: .releasing)
        return configuration
    }

    /// Withdraws the published configuration after a change to what it holds (called holding the binding's lock).
    func withdraw() {
        current.store(nil, ordering: .releasing)
    }
}
