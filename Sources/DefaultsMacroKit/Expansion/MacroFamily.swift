/// A family of macros that work together: one class macro and the property attributes that belong to it.
///
/// Attributes shared by every family (`@ObservableOnly`, `@Ignore`) are not part of a family. The
/// expansions take the family they expand for, so what differs between `@ObservableDefaults` and
/// `@ObservableCloud` is data here: the attribute names, the key argument's label, and the class macro's
/// arguments with the members only that family generates (``options``).
public struct MacroFamily: Sendable, Equatable {
    /// The class macro's attribute name (`ObservableDefaults`).
    public let classAttribute: String
    /// The attribute that persists a property (`DefaultsBacked`).
    public let persistedAttribute: String
    /// The attribute that only names a property's key (`DefaultsKey`).
    public let keyAttribute: String
    /// The label of the key argument of the persisted and key attributes (`userDefaultsKey`).
    public let keyLabel: String
    /// The class macro's arguments; they also generate the members only this family has.
    let options: any ClassMacroOptions.Type
    /// Where the family stores a property, for messages (`a suite`).
    let storeDescription: String

    /// `@ObservableDefaults`, `@DefaultsBacked`, `@DefaultsKey`.
    public static let defaults = MacroFamily(
        classAttribute: "ObservableDefaults", persistedAttribute: "DefaultsBacked", keyAttribute: "DefaultsKey",
        keyLabel: "userDefaultsKey", options: ObservableDefaultsOptions.self,
        storeDescription: "a suite")
    /// `@ObservableCloud`, `@CloudBacked`, `@CloudKey`.
    public static let cloud = MacroFamily(
        classAttribute: "ObservableCloud", persistedAttribute: "CloudBacked", keyAttribute: "CloudKey",
        keyLabel: "keyValueStoreKey", options: ObservableCloudOptions.self,
        storeDescription: "a cloud store")
    /// Every family the kit knows.
    public static let all: [MacroFamily] = [.defaults, .cloud]

    /// A family is known by its class macro's name.
    public static func == (lhs: MacroFamily, rhs: MacroFamily) -> Bool { lhs.classAttribute == rhs.classAttribute }

    /// The family whose class macro is written first on `type`, or `nil` when it has none.
    static func of(_ type: TypeDeclSyntax) -> MacroFamily? {
        for attribute in type.attributes {
            if let family = all.first(where: { $0.classAttribute == attribute.name }) { return family }
        }
        return nil
    }

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
