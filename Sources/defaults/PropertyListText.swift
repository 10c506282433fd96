import ObservableDefaults

/// Values written without a type flag, parsed by the library as macOS `defaults write` parses them (see
/// `DefaultsValue.init(propertyListText:)`); text that starts like a property list but does not parse is an
/// error naming the position, not a silently stored string.
enum PropertyListText {
    /// The value `text` stands for.
    static func value(of text: String) throws(ToolError) -> DefaultsValue {
        do {
            return try DefaultsValue(propertyListText: text)
        } catch {
            throw ToolError(error.message + "; write it with -string to store the text as it is")
        }
    }
}
