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
        let member = memberProblem(stored, expected: Value.self)
        let path = [key] + (member?.path ?? [])
        let position = suite.format == .json ? jsonValuePosition(ofPath: path, in: suite.fileURL) : nil
        return DefaultsError(
            .wrongType, message: "\(member?.sentence ?? plainProblem(stored, expected: Value.self)); \(consequence)",
            fileURL: suite.fileURL, key: key, line: position?.line, column: position?.column)
    }

    /// `'cpu' expects a number, found the string "lots"` (a member of a Codable value),
    /// `'verbose' is not a case of LogLevel: light, dark, system`, or `"many" is not an Int`.
    static func problem<Value>(_ stored: DefaultsValue, expected: Value.Type) -> String {
        memberProblem(stored, expected: Value.self)?.sentence ?? plainProblem(stored, expected: Value.self)
    }

    /// ``problem(_:expected:)`` for a value that is wrong as a whole (no member of it is the reason).
    private static func plainProblem<Value>(_ stored: DefaultsValue, expected: Value.Type) -> String {
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
        return "\(literal(stored)) is not \(name.withIndefiniteArticle)"
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

    /// Why a stored value does not decode into a Codable `Value`, when a member inside it is the reason: the
    /// member's path below the key (`["limits", "cpu"]` is `'limits.cpu'`) and the sentence saying what it
    /// expects and found, or which field is missing. `nil` when `Value` is not Codable, or the value as a
    /// whole is of the wrong kind (the plain sentence of ``problem(_:expected:)`` says that better).
    ///
    /// Decodes again to learn why: only on this error path, never on a read.
    static func memberProblem<Value>(_ stored: DefaultsValue, expected: Value.Type) -> (
        sentence: String, path: [String]
    )? {
        guard let decodable = unwrappedType(Value.self) as? any Decodable.Type else { return nil }
        let failure: DecodingError
        do {
            _ = try DefaultsValueDecoder().decode(decodable, from: stored)
            return nil
        } catch let error as DecodingError {
            failure = error
        } catch {
            return nil
        }
        switch failure {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            guard !context.codingPath.isEmpty else { return nil }
            let path = context.codingPath.map { $0.pathComponent }
            return ("'\(joined(path))' \(context.debugDescription)", path)
        case .keyNotFound(let missing, let context):
            let path = context.codingPath.map { $0.pathComponent }
            let owner = path.isEmpty ? "" : " in '\(joined(path))'"
            return ("the field '\(missing.stringValue)'\(owner) is missing", path)
        @unknown default:
            return nil
        }
    }

    /// `limits.cpu`, `servers[2].port`.
    private static func joined(_ path: [String]) -> String {
        path.reduce("") { text, component in
            component.hasPrefix("[") || text.isEmpty ? text + component : text + "." + component
        }
    }

    /// The line and column of the value at `path` in the JSON file: the top-level member named by its first
    /// component, then the members of nested objects named by the next ones, as deep as objects go (an
    /// array's element is shown at the array).
    static func jsonValuePosition(ofPath path: [String], in fileURL: URL) -> TextPosition? {
        guard let data = FileManager.default.contents(atPath: fileURL.path) else { return nil }
        return data.withUnsafeBytes { raw -> TextPosition? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var found: Int?
            var object = 0..<bytes.count
            for name in path {
                guard !name.hasPrefix("["),
                    let value = memberValue(named: name, in: UnsafeBufferPointer(rebasing: bytes[object]))
                else { break }
                object = (object.lowerBound + value.lowerBound)..<(object.lowerBound + value.upperBound)
                found = object.lowerBound
            }
            return found.map { TextPosition(of: $0, in: bytes) }
        }
    }

    /// The byte range of the value of member `name` in the JSON object `bytes` (the last duplicate, which
    /// reading keeps), or `nil` when `bytes` is no object or has no such member.
    private static func memberValue(named name: String, in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard let members = JSONSuiteIndex.scan(bytes) else { return nil }
        for member in members.reversed() {
            let quoted = Data(UnsafeBufferPointer(rebasing: bytes[member.key]))
            if (try? JSONDecoder().decode(String.self, from: quoted)) == name { return member.value }
        }
        return nil
    }
}

/// Lets ``_DefaultsMismatch`` name the wrapped type of an Optional property.
protocol _DefaultsOptional {
    static var wrappedType: Any.Type { get }
}

extension Optional: _DefaultsOptional {
    static var wrappedType: Any.Type { Wrapped.self }
}

extension CodingKey {
    /// `cpu` for a member, `[2]` for an array element, in a path shown to a person.
    fileprivate var pathComponent: String { intValue.map { "[\($0)]" } ?? stringValue }
}
