import Foundation

// Names the Apple library declares for `@ObservableCloud`, so code written for it compiles here unchanged.

/// The Apple library's marker for values stored directly in the cloud store. Its conformances are the
/// Apple library's list; here any ``DefaultsValueConvertible`` type is stored directly, so the protocol only
/// keeps code that names it compiling.
public protocol CloudPropertyListValue {}

/// The Apple library's name for a `Codable` value stored in the cloud store (a compatibility alias there too).
public typealias CodableCloudPropertyListValue = Codable

extension String: CloudPropertyListValue {}
extension Int: CloudPropertyListValue {}
extension Int64: CloudPropertyListValue {}
extension Double: CloudPropertyListValue {}
extension Float: CloudPropertyListValue {}
extension Bool: CloudPropertyListValue {}
extension Data: CloudPropertyListValue {}
extension Date: CloudPropertyListValue {}
extension Array: CloudPropertyListValue where Element: CloudPropertyListValue {}
extension Dictionary: CloudPropertyListValue where Key == String, Value: CloudPropertyListValue {}
extension Optional: CloudPropertyListValue where Wrapped: CloudPropertyListValue {}

/// The Apple library's protocol for a store shaped like `NSUbiquitousKeyValueStore` (there it lets tests
/// swap the real store for a mock). ``CloudKeyValueStore`` conforms, so code written against the protocol
/// compiles here unchanged.
public protocol ObservableDefaultsCloudStoreProtocol {
    /// The value for `aKey` as a Foundation object, or `nil`.
    func object(forKey aKey: String) -> Any?
    /// Stores a property-list object (`nil` removes the key).
    func set(_ anObject: Any?, forKey aKey: String)
    /// Removes `aKey`.
    func removeObject(forKey aKey: String)
    /// The string for `aKey`, or `nil`.
    func string(forKey aKey: String) -> String?
    /// The array for `aKey`, or `nil`.
    func array(forKey aKey: String) -> [Any]?
    /// The dictionary for `aKey`, or `nil`.
    func dictionary(forKey aKey: String) -> [String: Any]?
    /// The data for `aKey`, or `nil`.
    func data(forKey aKey: String) -> Data?
    /// The integer for `aKey`, or 0.
    func longLong(forKey aKey: String) -> Int64
    /// The number for `aKey`, or 0.
    func double(forKey aKey: String) -> Double
    /// The boolean for `aKey`, or `false`.
    func bool(forKey aKey: String) -> Bool
    /// Stores a string (`nil` removes the key).
    func set(_ aString: String?, forKey aKey: String)
    /// Stores data (`nil` removes the key).
    func set(_ aData: Data?, forKey aKey: String)
    /// Stores an array (`nil` removes the key).
    func set(_ anArray: [Any]?, forKey aKey: String)
    /// Stores a dictionary (`nil` removes the key).
    func set(_ aDictionary: [String: Any]?, forKey aKey: String)
    /// Stores an integer.
    func set(_ value: Int64, forKey aKey: String)
    /// Stores a number.
    func set(_ value: Double, forKey aKey: String)
    /// Stores a boolean.
    func set(_ value: Bool, forKey aKey: String)
    /// Every key and value as Foundation objects.
    var dictionaryRepresentation: [String: Any] { get }
    /// Reconciles with the server; whether it succeeded.
    func synchronize() -> Bool
}

extension CloudKeyValueStore: ObservableDefaultsCloudStoreProtocol {}
