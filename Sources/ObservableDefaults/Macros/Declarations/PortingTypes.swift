import Foundation

// Names the Apple library declares, so code written for it compiles here unchanged.

/// The Apple library's marker for values stored directly as property-list values. Its conformances list
/// the types it names; here any ``DefaultsValueConvertible`` type (which these all are) is stored directly,
/// so the protocol only keeps code that names it compiling.
public protocol UserDefaultsPropertyListValue: Equatable {}

/// The Apple library's name for a `Codable` value stored in the defaults (a compatibility alias there too).
public typealias CodableUserDefaultsPropertyListValue = Codable

extension Data: UserDefaultsPropertyListValue {}
extension String: UserDefaultsPropertyListValue {}
extension URL: UserDefaultsPropertyListValue {}
extension Date: UserDefaultsPropertyListValue {}
extension Bool: UserDefaultsPropertyListValue {}
extension Int: UserDefaultsPropertyListValue {}
extension Int8: UserDefaultsPropertyListValue {}
extension Int16: UserDefaultsPropertyListValue {}
extension Int32: UserDefaultsPropertyListValue {}
extension Int64: UserDefaultsPropertyListValue {}
extension UInt: UserDefaultsPropertyListValue {}
extension UInt8: UserDefaultsPropertyListValue {}
extension UInt16: UserDefaultsPropertyListValue {}
extension UInt32: UserDefaultsPropertyListValue {}
extension UInt64: UserDefaultsPropertyListValue {}
extension Double: UserDefaultsPropertyListValue {}
extension Float: UserDefaultsPropertyListValue {}
extension NSData: UserDefaultsPropertyListValue {}
extension NSString: UserDefaultsPropertyListValue {}
extension NSURL: UserDefaultsPropertyListValue {}
extension NSDate: UserDefaultsPropertyListValue {}
extension NSNumber: UserDefaultsPropertyListValue {}
extension Array: UserDefaultsPropertyListValue where Element: UserDefaultsPropertyListValue {}
extension Dictionary: UserDefaultsPropertyListValue where Key == String, Value: UserDefaultsPropertyListValue {}
extension Optional: UserDefaultsPropertyListValue where Wrapped: UserDefaultsPropertyListValue {}
