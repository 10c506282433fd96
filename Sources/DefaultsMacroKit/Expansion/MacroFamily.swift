/// A family of macros that work together: one class macro and the property attributes that belong to it.
///
/// Attributes shared by every family (`@ObservableOnly`, `@Ignore`) are not part of a family. A second family
/// (the cloud macros: `@ObservableCloud`, `@CloudBacked`, `@CloudKey`) is one more value here and its cases in
/// ``MacroName``; the expansions take the family they expand for.
public struct MacroFamily: Sendable, Equatable {
    /// The class macro's attribute name (`ObservableDefaults`).
    public let classAttribute: String
    /// The attribute that persists a property (`DefaultsBacked`).
    public let persistedAttribute: String
    /// The attribute that only names a property's key (`DefaultsKey`).
    public let keyAttribute: String

    /// `@ObservableDefaults`, `@DefaultsBacked`, `@DefaultsKey`.
    public static let defaults = MacroFamily(
        classAttribute: "ObservableDefaults", persistedAttribute: "DefaultsBacked", keyAttribute: "DefaultsKey")
    /// The cloud family's names. Its macros are not in this kit yet; the names let the defaults family tell a
    /// user who mixes the two which attribute to use instead.
    public static let cloud = MacroFamily(
        classAttribute: "ObservableCloud", persistedAttribute: "CloudBacked", keyAttribute: "CloudKey")
    /// Every family the kit knows the names of.
    public static let all: [MacroFamily] = [.defaults, .cloud]

    /// The attribute of this family that does what `attribute` of `other` does (`CloudKey` → `DefaultsKey`),
    /// or `nil` when `attribute` is not one of `other`'s property attributes.
    func counterpart(of attribute: String, in other: MacroFamily) -> String? {
        switch attribute {
        case other.persistedAttribute: persistedAttribute
        case other.keyAttribute: keyAttribute
        default: nil
        }
    }

    /// The other families.
    var others: [MacroFamily] { Self.all.filter { $0 != self } }
}
