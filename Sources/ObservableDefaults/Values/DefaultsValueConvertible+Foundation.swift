import Foundation

extension Date: DefaultsValueConvertible {
    /// The date of a `.date` value, or of an ISO 8601 `.string` (`2024-05-01T12:30:00.123Z`,
    /// `2024-05-01T12:30:00Z`, or with a `±HH:MM` offset) — the form JSON suites store dates in.
    public init?(defaultsValue: DefaultsValue) {
        switch defaultsValue {
        case .date(let value): self = value
        case .string(let text):
            guard let value = ISO8601Text.date(from: text) else { return nil }
            self = value
        default: return nil
        }
    }
    /// `.date(self)`.
    public var defaultsValue: DefaultsValue { .date(self) }
}

extension Data: DefaultsValueConvertible {
    /// The bytes of a `.data` value, or of a base64 `.string` — the form JSON suites store data in.
    public init?(defaultsValue: DefaultsValue) {
        switch defaultsValue {
        case .data(let value): self = value
        case .string(let text):
            guard let value = Data(base64Encoded: text) else { return nil }
            self = value
        default: return nil
        }
    }
    /// `.data(self)`.
    public var defaultsValue: DefaultsValue { .data(self) }
}

extension URL: DefaultsValueConvertible {
    /// The URL a `.string` value spells.
    public init?(defaultsValue: DefaultsValue) {
        guard case .string(let text) = defaultsValue, let value = URL(string: text) else { return nil }
        self = value
    }
    /// `.string` holding `absoluteString`.
    public var defaultsValue: DefaultsValue { .string(absoluteString) }
}
