import Foundation

/// The encodings an XML property list may be in, brought to the UTF-8 that ``PropertyListXMLReader``
/// reads: UTF-8 (a byte-order mark is dropped) and UTF-16 with a byte-order mark (transcoded). UTF-16
/// without a byte-order mark, and UTF-16 that does not decode, are errors with their line and column.
enum XMLTextEncoding {
    /// Whether `bytes` start with a UTF-16 byte-order mark (either byte order).
    static func hasUTF16ByteOrderMark(_ bytes: some Collection<UInt8>) -> Bool {
        let first = bytes.prefix(2)
        return first.elementsEqual([0xFF, 0xFE]) || first.elementsEqual([0xFE, 0xFF])
    }

    /// Calls `body` with the document as UTF-8 and whether it was UTF-16.
    static func withUTF8<T>(
        _ bytes: UnsafeBufferPointer<UInt8>, fileURL: URL?,
        _ body: (UnsafeBufferPointer<UInt8>, Bool) -> Result<T, DefaultsError>
    ) -> Result<T, DefaultsError> {
        if hasUTF16ByteOrderMark(bytes) {
            var utf8: [UInt8] = []
            if let problem = transcodeUTF16(bytes, bigEndian: bytes[0] == 0xFE, into: &utf8) {
                let position = utf8.withUnsafeBufferPointer { TextPosition(of: $0.count, in: $0) }
                return .failure(
                    DefaultsError(
                        .malformedFile, message: problem, fileURL: fileURL, line: position.line,
                        column: position.column))
            }
            return utf8.withUnsafeBufferPointer { body($0, true) }
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return body(UnsafeBufferPointer(rebasing: bytes[3...]), false) }
        if bytes.count >= 2,
            (bytes[0] == 0 && bytes[1] == UInt8(ascii: "<")) || (bytes[0] == UInt8(ascii: "<") && bytes[1] == 0)
        {
            return .failure(
                DefaultsError(
                    .malformedFile,
                    message:
                        "the file looks like UTF-16 without a byte-order mark: save it as UTF-8, or as UTF-16 with a byte-order mark",
                    fileURL: fileURL, line: 1, column: 1))
        }
        return body(bytes, false)
    }

    /// Appends the UTF-8 of the UTF-16 text after the byte-order mark to `utf8`; a description of the
    /// problem when it does not decode (`utf8` then ends where the problem is).
    private static func transcodeUTF16(
        _ bytes: UnsafeBufferPointer<UInt8>, bigEndian: Bool, into utf8: inout [UInt8]
    ) -> String? {
        utf8.reserveCapacity(bytes.count)
        func unit(at offset: Int) -> UInt16 {
            bigEndian
                ? UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
                : UInt16(bytes[offset + 1]) << 8 | UInt16(bytes[offset])
        }
        func hex(_ unit: UInt16) -> String { "0x" + String(unit, radix: 16, uppercase: true) }
        var offset = 2
        while offset + 1 < bytes.count {
            let first = unit(at: offset)
            offset += 2
            var value = UInt32(first)
            switch first {
            case 0xD800...0xDBFF:
                guard offset + 1 < bytes.count, case let second = unit(at: offset), (0xDC00...0xDFFF).contains(second)
                else { return "the UTF-16 text holds a high surrogate \(hex(first)) without its low surrogate" }
                offset += 2
                value = 0x1_0000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
            case 0xDC00...0xDFFF:
                return "the UTF-16 text holds a low surrogate \(hex(first)) without its high surrogate"
            default:
                break
            }
            utf8.append(contentsOf: UTF8.encode(Unicode.Scalar(value)!)!)
        }
        if offset < bytes.count { return "the UTF-16 text ends in the middle of a character (an odd number of bytes)" }
        return nil
    }
}
