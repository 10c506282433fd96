/// Where a property write goes, for both macro families: one key of a suite (`@ObservableDefaults`) or of a
/// cloud store (`@ObservableCloud`), with the object's own observer that the write is not announced to.
///
/// The setter, `_DefaultsSlot.write(_:to:keyPath:on:registrar:willSet:didSet:)`, is written once over it;
/// it is inlinable and the conformers are concrete structs, so it specializes per family and per property type
/// (no witness-table calls on the hot path). Implementation detail of the macros; not API.
@usableFromInline
protocol _DefaultsWriteTarget {
    /// A value the target accepted for writing, in the form it stores.
    associatedtype Accepted

    /// Reports on the target's error channel that a value of `type` could not be encoded.
    func reportUnencodable(_ type: Any.Type, _ error: any Error)

    /// `stored` accepted for writing now (`nil` removes the key), or `nil` after reporting on the target's
    /// error channel why it is refused — the target's own `set` refuses it alike.
    /// `stored` is consumed (a conformer may take it by borrowing): a suite moves it into its result.
    func accept(_ stored: consuming DefaultsValue?) -> Accepted?

    /// The stored form of an accepted value, as the property's copy keeps it (`nil`: the key removed).
    func storedForm(of accepted: Accepted) -> DefaultsValue?

    /// What the property reads when the key is absent: the registered default (a suite), else the
    /// declaration default.
    func fallback<Value>(of slot: _DefaultsSlot<Value>) -> _DefaultsSlot<Value>.State

    /// Whether assigning `nil` to an Optional property leaves it `nil` (the object's own development store)
    /// instead of reading ``fallback(of:)``.
    var keepsAssignedNil: Bool { get }

    /// What the target holds for the key now.
    func currentValue() -> DefaultsValue?

    /// Writes the accepted value, running `alongside` under the target's lock when the write is accepted;
    /// returns whether it was (a cloud store refuses a write that another one pushed past its limits).
    func write(_ accepted: Accepted, alongside: () -> Void) -> Bool

    /// ``write(_:alongside:)`` for a property that keeps a handle on its key's change in the target's memory
    /// between writes (a suite's ``PendingHandle``): `handle` is the one kept from the last write, and
    /// `alongside` gets the one to keep now. A target without handles uses the default: it writes as above
    /// and hands on `nil`.
    func write(_ accepted: consuming Accepted, handle: PendingHandle?, alongside: (PendingHandle?) -> Void) -> Bool
}

extension _DefaultsWriteTarget {
    @inlinable
    func write(_ accepted: consuming Accepted, handle: PendingHandle?, alongside: (PendingHandle?) -> Void) -> Bool {
        write(accepted) { alongside(nil) }
    }
}

/// The full key of a property write and the observer it is not announced to: the object's own, unless
/// another property of the object is mapped to the same key (that one must hear the write). Both families.
func _propertyWriteKey<Token>(
    _ key: String, prefix: String, ownObserver: Token?, sharedKeys: Set<String>
) -> (fullKey: String, skippedObserver: Token?) {
    let fullKey = prefix.isEmpty ? key : prefix + key
    let shared = !sharedKeys.isEmpty && sharedKeys.contains(fullKey)
    return (fullKey, shared ? nil : ownObserver)
}
