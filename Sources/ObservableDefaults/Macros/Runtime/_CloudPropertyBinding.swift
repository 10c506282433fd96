import Foundation

/// One persisted property of an `@ObservableCloud` object, type-erased for the object's binding.
///
/// Implementation detail of the macros; not API.
public struct _CloudPropertyBinding: @unchecked Sendable {
    let key: String
    let keyPath: AnyKeyPath
    /// The property's `_DefaultsSlot` (typed again by ``_CloudObjectBinding/update(_:of:_:)``).
    let slot: AnyObject
    /// Reads the store into the property's copy without notifying anyone (start-up).
    let load: (CloudKeyValueStore, String) -> Void
    /// Reads the store after a change of the key and applies it: observers, Observation, copy.
    let apply: (CloudKeyValueStore, String) -> Void
}

/// The properties `_od_startCloudObservation` collects.
///
/// Implementation detail of the macros; not API.
public final class _CloudPropertyList: @unchecked Sendable {
    var properties: [_CloudPropertyBinding] = []
    /// Creates an empty list.
    public init() {}
    /// Adds one property's description.
    public func append(_ property: _CloudPropertyBinding) { properties.append(property) }
}
