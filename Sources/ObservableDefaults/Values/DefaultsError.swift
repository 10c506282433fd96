import Foundation

/// An error from a suite: a bad name, a file that does not parse, a value of the wrong type, or a
/// file-system failure.
///
/// Errors name the file, the key (when one is involved), the position in the file (for parse errors)
/// and what was expected. ``description`` renders them the way compilers do:
/// `/home/me/.config/observable-defaults/app.json:3:14: error: expected ',' or '}' after a value`.
public struct DefaultsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Kind: String, Sendable, Equatable {
        /// A suite name that is empty, contains `/` or NUL, is `.` or `..`, or is too long for its file's
        /// sidecar names to fit in 255 bytes.
        case invalidSuiteName
        /// A suite file whose contents do not parse; ``DefaultsError/line`` and ``DefaultsError/column`` say where.
        case malformedFile
        /// A stored value whose type does not fit what the reader expected.
        case wrongType
        /// A value the suite's format cannot hold.
        case unsupportedValue
        /// A file-system operation failed (missing or unwritable directory, permission denied, disk full,
        /// a directory where the file should be).
        case fileSystem
        /// A cloud store could not reach or use its server: unreachable endpoints, refused credentials, a
        /// malformed answer, a server value that does not decode (the message names endpoint and key).
        case cloud
        /// A list of layers that does not hold ``DefaultsLayer/file`` exactly once, or holds a layer twice.
        case invalidLayers
        /// A write to a key an administrator forces (the managed layer has it): nothing was written, and the
        /// key keeps its forced value.
        case forcedKey
        /// A managed or system file that is not owned by root or this process's user, or that others may
        /// change: it is ignored until its owner and mode are fixed.
        case untrustedFile
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// The suite file involved, if any.
    public var fileURL: URL?
    /// The key involved, if any.
    public var key: String?
    /// The 1-based line of a parse error.
    public var line: Int?
    /// The 1-based column (in characters) of a parse error.
    public var column: Int?
    /// What went wrong and what was expected, without the file and position (those are in the other fields).
    public var message: String
    /// The `errno` of a failed system call, if any.
    public var errorNumber: Int32?

    /// Creates an error; all fields but `kind` and `message` are optional.
    public init(
        _ kind: Kind, message: String, fileURL: URL? = nil, key: String? = nil,
        line: Int? = nil, column: Int? = nil, errorNumber: Int32? = nil
    ) {
        self.kind = kind
        self.message = message
        self.fileURL = fileURL
        self.key = key
        self.line = line
        self.column = column
        self.errorNumber = errorNumber
    }

    /// `path:line:column: error: key 'k': message`, with the parts that are known.
    public var description: String {
        var location = ""
        if let fileURL { location = fileURL.path }
        if let line { location += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        var text = location.isEmpty ? "error: " : location + ": error: "
        if let key { text += "key '\(key)': " }
        text += message
        if let errorNumber { text += " (\(String(cString: strerror(errorNumber))))" }
        return text
    }
}

extension DefaultsError: LocalizedError {
    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}
