import Foundation

/// A key-value pair from etcd's JSON gateway: key and value arrive base64, revisions as decimal strings,
/// and fields with zero values are left out (a delete event's pair has no value).
struct EtcdKeyValue: Sendable {
    var key: String
    var value: Data?
    var modRevision: Int64
}

/// The header every etcd answer carries.
struct EtcdHeader: Sendable {
    var clusterID: String
    var revision: Int64
}

/// Reading etcd's JSON answers; anything unexpected is a ``DefaultsError`` naming the endpoint and
/// request, never a crash.
///
/// Parsed with the library's own ``JSONReader`` into ``DefaultsValue``s: every watch event and upload
/// answer passes through here, and `JSONSerialization` with its `Any` casts cost a tenth of an observing
/// process's CPU per change.
struct EtcdAnswer {
    let object: [String: DefaultsValue]
    let context: String

    init(object: [String: DefaultsValue], context: String) {
        self.object = object
        self.context = context
    }

    /// Parses a whole answer body.
    init(data: Data, context: String) throws(DefaultsError) {
        guard case .dictionary(let object)? = try? JSONReader.parseDocument(data) else {
            throw Self.malformed(
                context, "it is not a JSON object: \(String(decoding: data.prefix(120), as: UTF8.self))")
        }
        self.init(object: object, context: context)
    }

    static func malformed(_ context: String, _ why: String) -> DefaultsError {
        DefaultsError(.cloud, message: "malformed answer from etcd (\(context)): \(why)")
    }

    func malformed(_ why: String) -> DefaultsError { Self.malformed(context, why) }

    /// A nested object (`nil` when absent).
    func child(_ name: String) throws(DefaultsError) -> EtcdAnswer? {
        guard let value = object[name] else { return nil }
        guard case .dictionary(let nested) = value else { throw malformed("'\(name)' is not an object") }
        return EtcdAnswer(object: nested, context: context)
    }

    /// A list of objects (empty when absent).
    func children(_ name: String) throws(DefaultsError) -> [EtcdAnswer] {
        guard let value = object[name] else { return [] }
        guard case .array(let list) = value else { throw malformed("'\(name)' is not a list of objects") }
        var result: [EtcdAnswer] = []
        result.reserveCapacity(list.count)
        for item in list {
            guard case .dictionary(let nested) = item else { throw malformed("'\(name)' is not a list of objects") }
            result.append(EtcdAnswer(object: nested, context: context))
        }
        return result
    }

    /// A 64-bit number sent as a decimal string (0 when absent, as the gateway leaves zeros out).
    func int64(_ name: String) throws(DefaultsError) -> Int64 {
        switch object[name] {
        case nil: return 0
        case .string(let text)?: if let number = Int64(text) { return number }
        case .integer(let number)?: return Int64(number)
        default: break
        }
        throw malformed("'\(name)' is not a decimal number: \(Self.describe(object[name]))")
    }

    func bool(_ name: String) -> Bool {
        guard case .bool(let value)? = object[name] else { return false }
        return value
    }

    func string(_ name: String) -> String? {
        guard case .string(let text)? = object[name] else { return nil }
        return text
    }

    /// Base64 bytes (`nil` when absent).
    func bytes(_ name: String) throws(DefaultsError) -> Data? {
        guard let value = object[name] else { return nil }
        guard case .string(let text) = value, let data = Data(base64Encoded: text) else {
            throw malformed("'\(name)' is not base64")
        }
        return data
    }

    /// The text of an `error` member: its `message` when it is an object (a watch's), else the member itself
    /// as JSON (`nil` when there is none).
    func errorMessage() -> String? {
        guard let error = object["error"] else { return nil }
        if case .dictionary(let fields) = error, case .string(let message)? = fields["message"] { return message }
        if case .string(let message) = error { return message }
        return Self.describe(error)
    }

    /// A value as JSON text, for error messages.
    static func describe(_ value: DefaultsValue?) -> String {
        guard let value else { return "nothing" }
        return String(decoding: JSONWriter.encodeValue(value), as: UTF8.self)
    }

    func header() throws(DefaultsError) -> EtcdHeader {
        guard let header = try child("header") else { throw malformed("the header is missing") }
        return EtcdHeader(clusterID: header.string("cluster_id") ?? "", revision: try header.int64("revision"))
    }

    func keyValue() throws(DefaultsError) -> EtcdKeyValue {
        guard let keyBytes = try bytes("key"), let key = String(validating: keyBytes, as: UTF8.self) else {
            throw malformed("a key-value pair has no UTF-8 key")
        }
        return EtcdKeyValue(key: key, value: try bytes("value"), modRevision: try int64("mod_revision"))
    }

    func keyValues() throws(DefaultsError) -> [EtcdKeyValue] {
        var result: [EtcdKeyValue] = []
        for child in try children("kvs") { result.append(try child.keyValue()) }
        return result
    }
}

/// Building etcd requests.
enum EtcdRequest {
    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// The `range_end` that makes a range cover every key starting with `prefix`.
    static func prefixEnd(_ prefix: String) -> String {
        var bytes = Array(prefix.utf8)
        while let last = bytes.last {
            if last < 0xFF { bytes[bytes.count - 1] = last + 1; return Data(bytes).base64EncodedString() }
            bytes.removeLast()
        }
        return Data([0]).base64EncodedString()
    }

    /// The body of a transaction that puts `value` (`nil`: deletes) under the whole key `key` if its
    /// modification revision is `expected` (0: absent), and otherwise does nothing.
    ///
    /// It has no failure branch: etcd's gateway answers a transaction with one 30–55 µs sooner, and a
    /// refused swap (rare) reads the key in a second request instead. Written directly rather than through
    /// `JSONSerialization` (it is on every upload's path): every string in it is base64 or a decimal
    /// number, so nothing needs escaping.
    static func compareAndSwapBody(key: String, value: Data?, expected: Int64) -> Data {
        let key = base64(key)
        let operation =
            value.map { #"{"request_put":{"key":"\#(key)","value":"\#($0.base64EncodedString())"}}"# }
            ?? #"{"request_delete_range":{"key":"\#(key)"}}"#
        return Data(
            (#"{"compare":[{"key":"\#(key)","target":"MOD","result":"EQUAL","mod_revision":"\#(expected)"}],"#
                + #""success":[\#(operation)]}"#).utf8)
    }

    /// The body of one transaction over several whole keys (a batch, or an update): it compares each key's
    /// modification revision with the one its write was based on (0: absent) and then puts each value
    /// (`nil`: deletes), all at one revision; otherwise it reads each key back, so a refusal brings the
    /// server's values in the same answer. With a `marker`, the success branch also puts the marker key
    /// (attached to `lease` when given), and a refusal reads it back: it tells whether an earlier attempt
    /// whose answer was lost was carried out (see `EtcdSync+Updates.swift`).
    static func transactionBody(
        _ writes: [(key: String, value: Data?, expected: Int64)],
        marker: (key: String, token: String, lease: String?)? = nil
    ) -> Data {
        var compares: [String] = []
        var success: [String] = []
        var failure: [String] = []
        for write in writes {
            let key = base64(write.key)
            compares.append(#"{"key":"\#(key)","target":"MOD","result":"EQUAL","mod_revision":"\#(write.expected)"}"#)
            success.append(
                write.value.map { #"{"request_put":{"key":"\#(key)","value":"\#($0.base64EncodedString())"}}"# }
                    ?? #"{"request_delete_range":{"key":"\#(key)"}}"#)
            failure.append(#"{"request_range":{"key":"\#(key)"}}"#)
        }
        if let marker {
            let key = base64(marker.key)
            let lease = marker.lease.map { #","lease":"\#($0)""# } ?? ""
            success.append(#"{"request_put":{"key":"\#(key)","value":"\#(base64(marker.token))"\#(lease)}}"#)
            failure.append(#"{"request_range":{"key":"\#(key)"}}"#)
        }
        return Data(
            (#"{"compare":[\#(compares.joined(separator: ","))],"success":[\#(success.joined(separator: ","))],"#
                + #""failure":[\#(failure.joined(separator: ","))]}"#).utf8)
    }
}

extension EtcdAnswer {
    /// The pairs a refused ``EtcdRequest/transactionBody(_:marker:)`` read back, one per range in its failure
    /// branch, in order (`nil`: the key is absent).
    func rangeResponses() throws(DefaultsError) -> [EtcdKeyValue?] {
        var result: [EtcdKeyValue?] = []
        for response in try children("responses") {
            guard let range = try response.child("response_range") else {
                throw malformed("a response of a refused transaction is not a range")
            }
            result.append(try range.keyValues().first)
        }
        return result
    }
}
