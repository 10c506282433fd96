import Foundation

/// How much the HTTP client reads from a member at most. Every size is checked as the bytes arrive, before
/// they are kept, so a member that sends too much — by a fault or on purpose — costs one failed request
/// (its connection is closed and the next member asked), never the process's memory.
///
/// - ``answerBytes``: an answer's body, each chunk of a chunked body, and each watch message; at least
///   8 MiB. The largest thing the store ever reads is the whole namespace in one range answer: at most
///   ``CloudLimits/maximumKeyCount`` keys (the namespace prefix and up to ``CloudLimits/maximumKeyBytes``
///   each) and ``CloudLimits/maximumTotalBytes`` of values, all base64 (4/3 of their size), each pair with
///   about 200 bytes of JSON names and decimal revisions. For iCloud's limits that is about 1.8 MB. The
///   limit is twice that estimate (room for values that other writers put past the store's limits) and never
///   below 8 MiB, so it only grows for stores configured with larger limits.
/// - ``headerLineBytes``: one line of a head (the status line, a header, a trailer, a chunk-size line):
///   16 KiB. etcd's gateway sends lines under 100 bytes.
/// - ``headBytes``: an answer's head (status line and headers, interim `100 Continue` heads included), and
///   its trailers: 64 KiB each. etcd's heads are about 400 bytes.
///
/// Documented in Docs/cloud.md, "Limits on what the client reads".
struct EtcdReadLimits: Sendable, Equatable {
    /// The most bytes of an answer's body, of one chunk, and of one watch message.
    var answerBytes: Int
    /// The most bytes of one line of a head, of the trailers, or of a chunk-size line.
    var headerLineBytes = 16 << 10
    /// The most bytes of an answer's head, and of its trailers.
    var headBytes = 64 << 10

    /// The floor of ``answerBytes``.
    static let minimumAnswerBytes = 8 << 20

    /// The limits of a client whose store has iCloud's limits (or no store: tests, probes).
    static let standard = EtcdReadLimits(answerBytes: minimumAnswerBytes)

    init(answerBytes: Int) {
        self.answerBytes = answerBytes
    }

    /// The limits for a store that keeps `limits` under the etcd key prefix `keyPrefix`.
    init(for limits: CloudLimits, keyPrefix: String) {
        // In floating point: configured limits may be anything up to Int.max.
        let keys = Double(max(0, limits.maximumKeyCount))
        let keyBytes = Double(keyPrefix.utf8.count) + Double(max(0, limits.maximumKeyBytes))
        let values = Double(max(0, limits.maximumTotalBytes))
        let estimate = (values + keys * keyBytes) * 4 / 3 + keys * 200 + 4096
        let bound = Int.max / 4  // leaves room to add to it without overflow
        self.init(answerBytes: 2 * estimate >= Double(bound) ? bound : max(Self.minimumAnswerBytes, Int(2 * estimate)))
    }

    /// `bytes` for messages: "8 MiB", "16 KiB", or a number of bytes.
    static func describe(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
