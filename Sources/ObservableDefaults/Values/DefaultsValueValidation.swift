import Foundation

/// The limits every suite file's readers enforce, which writers therefore enforce too: a value that a
/// reader would reject is refused when it is set, instead of being written into a file nobody can read.
enum DefaultsValueLimits {
    /// Containers nested deeper than this, counting the file's top-level dictionary, are rejected by
    /// every reader (``JSONReader``, ``PropertyListXMLReader``, ``BinaryPropertyListReader``).
    static let maximumFileDepth = 512

    /// Containers a value stored under one key may nest: the top-level dictionary takes one level.
    static let maximumValueDepth = maximumFileDepth - 1

    /// The dates both formats write and read back unchanged: years 0000 to 9999 of the ISO 8601 text
    /// (`0000-01-01T00:00:00Z` up to the last millisecond of 9999), in seconds since 1970.
    static let dateRange: ClosedRange<Double> = -62_167_219_200...253_402_300_799.999
}

extension SuiteFormat {
    /// Whether ``validate(_:forKey:fileURL:)`` passes `value` under any key without looking at it: JSON
    /// takes every number but non-finite doubles, every boolean, string and data value (a property list
    /// checks the key and strings for characters XML rejects). The writes' fast path.
    @inline(__always)
    func acceptsUnderAnyKey(_ value: DefaultsValue) -> Bool {
        guard self == .json else { return false }
        switch value {
        case .integer, .bool, .data, .string: return true
        default: return false
        }
    }

    /// Checks that `value` can be written in this format and read back as it is, without recursion (so a
    /// value nested 100,000 deep is refused, not a stack overflow).
    ///
    /// Refused, with an ``DefaultsError/Kind/unsupportedValue`` error naming `key` and where inside the
    /// value the problem is: containers nested deeper than ``DefaultsValueLimits/maximumValueDepth``;
    /// dates outside ``DefaultsValueLimits/dateRange`` or not finite; in JSON, `NaN` and infinite doubles
    /// (JSON has no such numbers); in property lists, strings and keys holding characters XML 1.0 does not
    /// allow (control characters other than tab, line feed and carriage return; U+FFFE; U+FFFF).
    func validate(_ value: DefaultsValue, forKey key: String, fileURL: URL?) throws(DefaultsError) {
        func failure(_ message: String, _ path: [PathStep]) -> DefaultsError {
            let place = path.isEmpty ? "" : "at " + path.map(\.description).joined() + ": "
            return DefaultsError(.unsupportedValue, message: place + message, fileURL: fileURL, key: key)
        }
        // Values that cannot fail (most writes: numbers, booleans, data, JSON strings) skip the stack's allocation.
        if acceptsUnderAnyKey(value) { return }
        if self == .propertyList, let bad = Self.firstCharacterXMLRejects(in: key) {
            throw failure(
                "the key contains \(bad), which an XML property list cannot hold (XML 1.0 allows no control characters other than tab, line feed and carriage return, nor U+FFFE or U+FFFF); nothing was written",
                [])
        }
        switch value {
        case .integer, .bool, .data: return  // a property list's, once its key passed
        default: break
        }
        // Depth-first with an explicit stack; a path is only built for the value that fails.
        var stack: [(value: DefaultsValue, depth: Int, path: [PathStep])] = [(value, 0, [])]
        while let (value, depth, path) = stack.popLast() {
            switch value {
            case .string(let string):
                if self == .propertyList, let bad = Self.firstCharacterXMLRejects(in: string) {
                    throw failure(
                        "the string contains \(bad), which an XML property list cannot hold (XML 1.0 allows no control characters other than tab, line feed and carriage return, nor U+FFFE or U+FFFF); nothing was written",
                        path)
                }
            case .double(let double):
                if self == .json, !double.isFinite {
                    throw failure(
                        "\(double) cannot be stored in a JSON suite (JSON has no NaN or infinity); nothing was written",
                        path)
                }
            case .date(let date):
                let seconds = date.timeIntervalSince1970
                if !DefaultsValueLimits.dateRange.contains(seconds) {
                    throw failure(
                        "the date \(seconds) seconds since 1970 is outside the years 0000 to 9999 that a suite file can hold; nothing was written",
                        path)
                }
            case .integer, .bool, .data:
                break
            case .array(let array):
                if depth + 1 > DefaultsValueLimits.maximumValueDepth { throw failure(Self.depthMessage, path) }
                for (index, element) in array.enumerated().reversed() {
                    stack.append((element, depth + 1, path + [.index(index)]))
                }
            case .dictionary(let dictionary):
                if depth + 1 > DefaultsValueLimits.maximumValueDepth { throw failure(Self.depthMessage, path) }
                for (member, element) in dictionary {
                    if self == .propertyList, let bad = Self.firstCharacterXMLRejects(in: member) {
                        throw failure(
                            "the key '\(member)' contains \(bad), which an XML property list cannot hold; nothing was written",
                            path)
                    }
                    stack.append((element, depth + 1, path + [.key(member)]))
                }
            }
        }
    }

    private static var depthMessage: String {
        "containers are nested more than \(DefaultsValueLimits.maximumValueDepth) levels deep (suite files allow \(DefaultsValueLimits.maximumFileDepth) levels counting the top-level dictionary); nothing was written"
    }

    /// `U+XXXX` of the first character of `string` that XML 1.0 does not allow, or `nil`.
    static func firstCharacterXMLRejects(in string: String) -> String? {
        for scalar in string.unicodeScalars where !PropertyListXMLReader.isXMLCharacter(scalar.value) {
            return "U+" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4)
        }
        return nil
    }

    /// One step from a value into a container, for error messages: `[3]` or `["name"]`.
    private enum PathStep: CustomStringConvertible {
        case index(Int)
        case key(String)

        var description: String {
            switch self {
            case .index(let index): "[\(index)]"
            case .key(let key): "[\"\(key)\"]"
            }
        }
    }
}
