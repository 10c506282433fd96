import Foundation

/// The limits a cloud store enforces on local writes; iCloud's by default. A write past them changes
/// nothing and is announced with ``CloudChangeReason/quotaViolation``.
public struct CloudLimits: Sendable, Equatable {
    /// At most this many keys.
    public var maximumKeyCount: Int
    /// At most this many bytes of values in all (a value's size is its JSON text; keys do not count).
    public var maximumTotalBytes: Int
    /// At most this many bytes for one value's JSON text.
    public var maximumValueBytes: Int
    /// At most this many bytes of UTF-8 in a key.
    public var maximumKeyBytes: Int

    /// Creates limits; the defaults are iCloud's.
    public init(
        maximumKeyCount: Int = 1024, maximumTotalBytes: Int = 1 << 20, maximumValueBytes: Int = 1 << 20,
        maximumKeyBytes: Int = 64
    ) {
        self.maximumKeyCount = maximumKeyCount
        self.maximumTotalBytes = maximumTotalBytes
        self.maximumValueBytes = maximumValueBytes
        self.maximumKeyBytes = maximumKeyBytes
    }

    /// iCloud's key-value store limits: 1024 keys, 1 MB in all, 1 MB per value, 64-byte keys.
    public static let iCloud = CloudLimits()

    /// Why storing a value of `valueBytes` under `key` breaks the limits, or `nil` when it fits.
    /// `sizes` are the current values' sizes by key, `totalBytes` their sum.
    func violation(key: String, valueBytes: Int?, sizes: [String: Int], totalBytes: Int) -> String? {
        if key.utf8.count > maximumKeyBytes {
            return "the key is \(key.utf8.count) bytes of UTF-8, more than the limit of \(maximumKeyBytes)"
        }
        guard let valueBytes else { return nil }
        if valueBytes > maximumValueBytes {
            return "the value is \(valueBytes) bytes of JSON, more than the limit of \(maximumValueBytes) per value"
        }
        // Room for one more key and for the whole value on top of what the store holds: no need to look
        // the key up (a hash of it) to know what its old value takes.
        if sizes.count < maximumKeyCount, totalBytes + valueBytes <= maximumTotalBytes { return nil }
        let existing = sizes[key]
        if existing == nil, sizes.count + 1 > maximumKeyCount {
            return "the store holds \(sizes.count) keys already, the limit is \(maximumKeyCount)"
        }
        let total = totalBytes - (existing ?? 0) + valueBytes
        if total > maximumTotalBytes {
            return "the values would take \(total) bytes in all, more than the limit of \(maximumTotalBytes)"
        }
        return nil
    }
}
