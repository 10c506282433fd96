import Foundation

extension DefaultsValue {
    /// Converts a Foundation object graph (`String`, `NSNumber`, `Int`, `Double`, `Bool`, `Date`, `Data`,
    /// `URL`, arrays, string-keyed dictionaries, ``DefaultsValue``) into a value; `nil` for anything else.
    public init?(any object: Any) {
        fatalError("TODO(codec helper)")
    }

    /// The value as a Foundation object (`String`, `Int`, `Double`, `Bool`, `Date`, `Data`, `[Any]`,
    /// `[String: Any]`), the way `UserDefaults.object(forKey:)` returns it.
    public var foundationObject: Any {
        fatalError("TODO(codec helper)")
    }
}
