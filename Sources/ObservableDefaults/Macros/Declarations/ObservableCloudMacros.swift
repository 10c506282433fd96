import Observation

/// Makes a class observable and binds its stored properties to a ``CloudKeyValueStore``, the settings shared
/// by every machine that uses the same store.
///
/// Every stored `var` becomes `@CloudBacked` (stored under `prefix + name`) unless it is marked
/// `@ObservableOnly` or `@Ignore`; with `observeFirst: true` it is the other way round: only `@CloudBacked`
/// properties are stored, the rest are observable only. A change made on another machine reaches the
/// property, its `willSet`/`didSet` and its observers, property by property.
///
/// The macro generates `init(prefix:syncImmediately:developmentMode:store:)`, whose arguments default to the
/// macro's: `prefix` (`nil`: the macro's), `syncImmediately`, `developmentMode`, and, on this platform only,
/// `store` (`nil`: ``CloudKeyValueStore/default``, or the development store in development mode).
/// With `autoInit: false`, write your own initializer and start the observation in it, as on Apple
/// platforms, after setting what you need (`_prefix`, `_syncImmediately`, `_developmentMode`, and here
/// `_cloudStore`):
///
///     init(prefix: String) {
///         _prefix = prefix
///         _syncImmediately = true
///         _cloudObserver = CloudObservation(host: self, prefix: _prefix)
///     }
///
/// The generated `_developmentMode_` tells whether the object uses the development store.
///
/// - Parameters:
///   - autoInit: Generate `init(prefix:syncImmediately:developmentMode:store:)`. It is generated only when
///     every stored property has an initial value.
///   - prefix: Prepended to every key (trimmed; a `.` is allowed on this platform).
///   - observeFirst: Only `@CloudBacked` properties are stored.
///   - syncImmediately: Synchronize the store after each write of a property (as the Apple library does with
///     `synchronize()`), rather than leaving the upload to the store's background sync.
///   - developmentMode: Keep the object's values in an in-memory store of its own (for tests and previews:
///     a new object starts from its declarations) instead of ``CloudKeyValueStore/default``. The environment variables
///     `OBSERVABLE_DEFAULTS_DEV_MODE=true` and `XCODE_RUNNING_FOR_PREVIEWS=1` turn it on too.
///   - defaultIsolationIsMainActor: The class is main-actor isolated by the module's default isolation;
///     outside changes are then delivered on the main actor (as for an explicit `@MainActor` class).
@attached(
    member, names: named(_od_registrar), named(_od_binding), named(_prefix), named(_syncImmediately),
    named(_developmentMode), named(_developmentMode_), named(_cloudStore), named(_cloudObserver),
    named(CloudObservation), named(_od_startCloudObservation), named(init), named(update), named(performBatchUpdates),
    arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: Observation.Observable)
public macro ObservableCloud(
    autoInit: Bool = true,
    prefix: String? = nil,
    observeFirst: Bool = false,
    syncImmediately: Bool = false,
    developmentMode: Bool = false,
    defaultIsolationIsMainActor: Bool = false
) = #externalMacro(module: "ObservableDefaultsMacros", type: "ObservableCloudMacro")

/// Stores the property in the class's cloud store and makes it observable. Added automatically to stored
/// properties of an `@ObservableCloud` class; write it yourself in `observeFirst` mode.
///
/// - Parameter keyValueStoreKey: The key (before the prefix): a literal or any `String` expression,
///   evaluated once per object; the property name when `nil` or omitted.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_od_willSet_), prefixed(_od_didSet_))
public macro CloudBacked(keyValueStoreKey: String? = nil) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "CloudBackedMacro")

/// Sets the key a property of an `@ObservableCloud` class is stored under (before the prefix).
///
/// - Parameter keyValueStoreKey: The key: a literal or any `String` expression that can be evaluated
///   where the property is declared (a constant, an interpolation); evaluated once per object. The
///   property name when `nil` or omitted.
@attached(peer)
public macro CloudKey(keyValueStoreKey: String? = nil) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "CloudKeyMacro")
