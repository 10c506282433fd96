import Foundation

/// The error reported when a stored value does not fit a property's type: what was found, what was
/// expected (the cases of an enum), and where the value is in the suite's file.
///
/// Only built when a value does not fit, so reading the file again to find the position costs nothing on
/// the normal path. Implementation detail of the macros; not API.
enum _DefaultsMismatch {
    static func error<Value>(
        for stored: DefaultsValue, expected: Value.Type, key: String, in suite: DefaultsSuite, consequence: String
    ) -> DefaultsError {
        let position = suite.format == .json ? jsonValuePosition(ofKey: key, in: suite.fileURL) : nil
        return DefaultsError(
            .wrongType, message: "\(problem(stored, expected: Value.self)); \(consequence)",
            fileURL: suite.fileURL, key: key, line: position?.line, column: position?.column)
    }

    /// `'verbose' is not a case of LogLevel: light, dark, system`, or `"many" is not an Int`.
    static func problem<Value>(_ stored: DefaultsValue, expected: Value.Type) -> String {
        let type = unwrappedType(Value.self)
        let name = String(describing: type)
        if let cases = caseRawValues(of: type) {
            let found: String
            switch stored {
            case .string(let text): found = "'\(text)'"
            case .integer(let number): found = "\(number)"
            default: found = "a value of type \(stored.typeName)"
            }
            return "\(found) is not a case of \(name): \(cases.joined(separator: ", "))"
        }
        let article = name.first.map { "AEIOU".contains($0) } == true ? "an" : "a"
        return "\(literal(stored)) is not \(article) \(name)"
    }

    /// The raw values of a `CaseIterable & RawRepresentable` type, in declaration order.
    private static func caseRawValues(of type: Any.Type) -> [String]? {
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        func rawValues<T: CaseIterable>(_: T.Type) -> [String]? {
            var values: [String] = []
            for value in T.allCases {
                guard let raw = value as? any RawRepresentable else { return nil }
                values.append("\(raw.rawValue)")
            }
            return values
        }
        return rawValues(iterable)
    }

    /// The stored value as it looks in a file, shortened: `"many"`, `5`, `true`, `an array`.
    private static func literal(_ stored: DefaultsValue) -> String {
        switch stored {
        case .string(let text): return "\"\(text.count > 40 ? text.prefix(40) + "…" : Substring(text))\""
        case .integer(let number): return "\(number)"
        case .double(let number): return "\(number)"
        case .bool(let flag): return "\(flag)"
        case .date(let date): return "the date \(date)"
        case .data(let data): return "\(data.count) bytes of data"
        case .array: return "an array"
        case .dictionary: return "a dictionary"
        }
    }

    /// `Int` for `Optional<Int>` (the property's value type, not the storage's).
    private static func unwrappedType(_ type: Any.Type) -> Any.Type {
        (type as? any _DefaultsOptional.Type).map { unwrappedType($0.wrappedType) } ?? type
    }

    /// The line and column of `key`'s value among the top-level members of the JSON file.
    static func jsonValuePosition(ofKey key: String, in fileURL: URL) -> TextPosition? {
        guard let data = FileManager.default.contents(atPath: fileURL.path) else { return nil }
        return data.withUnsafeBytes { raw -> TextPosition? in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard let members = JSONSuiteIndex.scan(bytes) else { return nil }
            for member in members.reversed() {  // the last duplicate wins when the file is read
                let quoted = Data(UnsafeBufferPointer(rebasing: bytes[member.key]))
                guard (try? JSONDecoder().decode(String.self, from: quoted)) == key else { continue }
                return TextPosition(of: member.value.lowerBound, in: bytes)
            }
            return nil
        }
    }
}

/// Lets ``_DefaultsMismatch`` name the wrapped type of an Optional property.
protocol _DefaultsOptional {
    static var wrappedType: Any.Type { get }
}

extension Optional: _DefaultsOptional {
    static var wrappedType: Any.Type { Wrapped.self }
}
