import Foundation

extension DefaultsValue {
    /// The value of a bare value of the `defaults` tool: old-style property-list text (`(a, b)`,
    /// `{ a = 1; }`, `<0aff>`) or an XML property-list fragment (`<integer>5</integer>`), else the string
    /// itself (as macOS `defaults write` reads it: `7` is the string "7").
    /// - Throws: a ``DefaultsError`` naming the position when text that starts like a property list does
    ///   not parse.
    public init(propertyListText text: String) throws(DefaultsError) {
        self = try PropertyListText.value(of: text)
    }

    /// The value of a setting given as text, by a `-key value` argument or an environment variable: an
    /// integer (`7`), a floating-point number (`0.5`, `1e3`), `true` or `false`, property-list text (see
    /// ``init(propertyListText:)``: `(a, b)` is an array), else the string itself. Text that starts like a
    /// property list but does not parse is the string itself, as Foundation reads its argument domain.
    public init(settingText text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let integer = Int(trimmed) {
            self = .integer(integer)
        } else if trimmed.contains(where: \.isNumber), trimmed.allSatisfy({ "0123456789+-.eE".contains($0) }),
            let double = Double(trimmed), double.isFinite
        {
            self = .double(double)
        } else if trimmed == "true" || trimmed == "false" {
            self = .bool(trimmed == "true")
        } else {
            self = (try? PropertyListText.value(of: text)) ?? .string(text)
        }
    }
}
