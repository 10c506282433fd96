import Observation

/// Makes a class observable and binds its stored properties to a ``DefaultsSuite``.
///
/// Every stored `var` becomes `@DefaultsBacked` (stored under `prefix + name`) unless it is marked
/// `@ObservableOnly` or `@Ignore`; with `observeFirst: true` it is the other way round: only
/// `@DefaultsBacked` properties are stored, the rest are observable only.
///
/// The class also gets `update(_:_:)`, an atomic read-modify-write of one persisted property across
/// processes: `try settings.update(\.launches) { $0 + 1 }`.
///
/// - Parameters:
///   - autoInit: Generate `init(userDefaults:ignoreExternalChanges:prefix:ignoredKeyPathsForExternalUpdates:)`.
///     With `false`, write your own initializer and call `observerStarter()` in it.
///   - ignoreExternalChanges: Hear only this object's own writes.
///   - suiteName: The suite's name (`nil` or `""`: ``DefaultsSuite/standard``).
///   - prefix: Prepended to every key (a `.` is allowed).
///   - observeFirst: Only `@DefaultsBacked` properties are stored.
///   - limitToInstance: Hear only changes made through the same suite in this process (`false`, the
///     default on this platform: also hear other processes and hand edits of the file).
///   - defaultIsolationIsMainActor: The class is main-actor isolated by the module's default isolation;
///     outside changes are then delivered on the main actor (as for an explicit `@MainActor` class).
@attached(
    member, names: named(_od_registrar), named(_od_binding), named(init), named(observerStarter), named(update),
    named(performBatchUpdates), arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: Observation.Observable)
public macro ObservableDefaults(
    autoInit: Bool = true,
    ignoreExternalChanges: Bool = false,
    suiteName: String? = nil,
    prefix: String? = nil,
    observeFirst: Bool = false,
    limitToInstance: Bool = false,
    defaultIsolationIsMainActor: Bool = false
) = #externalMacro(module: "ObservableDefaultsMacros", type: "ObservableDefaultsMacro")

/// Stores the property in the class's suite and makes it observable. Added automatically to stored
/// properties of an `@ObservableDefaults` class; write it yourself in `observeFirst` mode.
///
/// - Parameter userDefaultsKey: The key (before the prefix): a literal or any `String` expression,
///   evaluated once per object; the property name when `nil` or omitted.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_od_willSet_), prefixed(_od_didSet_))
public macro DefaultsBacked(userDefaultsKey: String? = nil) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "DefaultsBackedMacro")

/// Sets the key a property is stored under (before the prefix).
///
/// - Parameter userDefaultsKey: The key: a literal or any `String` expression that can be evaluated
///   where the property is declared (a constant, an interpolation); evaluated once per object. The
///   property name when `nil` or omitted.
@attached(peer)
public macro DefaultsKey(userDefaultsKey: String? = nil) =
    #externalMacro(module: "ObservableDefaultsMacros", type: "DefaultsKeyMacro")

/// Makes the property observable without storing it.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_od_), prefixed(_od_willSet_), prefixed(_od_didSet_))
public macro ObservableOnly() = #externalMacro(module: "ObservableDefaultsMacros", type: "ObservableOnlyMacro")

/// Leaves the property alone: neither observable nor stored.
@attached(peer)
public macro Ignore() = #externalMacro(module: "ObservableDefaultsMacros", type: "IgnoreMacro")
