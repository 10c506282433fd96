/// An optional `Codable` value, as the Apple library declares it for properties of a custom `Codable` type
/// that may be absent (there, `User?` picks the wrong storage overload). Here `User?` works too; `Nullable`
/// keeps ported code compiling, and is stored the same way: `.none` removes the key.
public enum Nullable<T: Codable & Equatable>: Codable, Equatable, ExpressibleByNilLiteral, CustomStringConvertible {
    /// No value (the key is removed).
    case none
    /// A value.
    case some(T)

    /// The wrapped value, or `nil`.
    public var value: T? {
        if case .some(let value) = self { return value }
        return nil
    }

    /// `.some(value)` for a value, `.none` for `nil`.
    public static func from(value: T?) -> Nullable<T> {
        value.map { .some($0) } ?? .none
    }

    /// Whether there is a value.
    public var hasValue: Bool { value != nil }

    /// The wrapped value transformed, or `.none`.
    public func map<U: Codable & Equatable>(_ transform: (T) -> U) -> Nullable<U> {
        .from(value: value.map(transform))
    }

    /// The wrapped value, or `defaultValue`.
    public func valueOrDefault(_ defaultValue: T) -> T { value ?? defaultValue }

    /// `.none`.
    public init(nilLiteral: ()) { self = .none }

    /// Encodes the wrapped value, or `nil`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    /// Decodes a value or `nil`.
    public init(from decoder: any Decoder) throws {
        self = .from(value: try decoder.singleValueContainer().decode(T?.self))
    }

    /// `Nullable.none` or `Nullable.some(…)`.
    public var description: String {
        value.map { "Nullable.some(\($0))" } ?? "Nullable.none"
    }
}

extension Nullable: Sendable where T: Sendable {}
