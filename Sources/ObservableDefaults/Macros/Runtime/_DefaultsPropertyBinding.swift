import Dispatch
import Foundation

/// One persisted property of an object, type-erased for the object's binding.
///
/// Implementation detail of the macros; not API.
public struct _DefaultsPropertyBinding: @unchecked Sendable {
    let key: String
    let keyPath: AnyKeyPath
    /// The property's `_DefaultsSlot` (typed again by ``_DefaultsObjectBinding/update(_:of:_:)``).
    let slot: AnyObject
    /// Reads the suite into the property's copy without notifying anyone (start-up).
    let load: (DefaultsSuite, String) -> Void
    /// Reads the suite after a change of the key into the copy without telling anyone (ignored key paths,
    /// `ignoreExternalChanges`).
    let follow: (DefaultsSuite, String) -> Void
    /// Reads the suite after a change of the key and applies it: observers, Observation, copy.
    let apply: (DefaultsSuite, String) -> Void
    /// Outside changes go through ``follow`` instead of ``apply``.
    var silent = false
}

/// The properties `observerStarter` collects.
///
/// Implementation detail of the macros; not API.
public final class _DefaultsPropertyList: @unchecked Sendable {
    var properties: [_DefaultsPropertyBinding] = []
    /// Creates an empty list.
    public init() {}
    /// Adds one property's description.
    public func append(_ property: _DefaultsPropertyBinding) { properties.append(property) }
}

/// Whether code runs on the main queue (the main actor's executor). `Thread.isMainThread` is not the test:
/// under some hosts (swift-testing on Linux) the main queue is drained by a thread Foundation does not call
/// the main thread.
enum MainQueue {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

/// A weak reference that can cross threads.
final class _DefaultsWeak<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}
