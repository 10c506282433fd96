import Foundation

/// Reading the JSON answers of etcd's gateway (``EtcdGatewayWire``) into the wire's typed results;
/// anything unexpected is a ``DefaultsError`` naming the endpoint and request, never a crash.
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
        DefaultsError.malformedEtcdAnswer(context, why)
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

    /// The header when the answer has one (a status, a lease grant or a login may come without).
    func optionalHeader() throws(DefaultsError) -> EtcdHeader? {
        object["header"] == nil ? nil : try header()
    }

    /// The responses of a transaction's operations, in order (each `response_put`, `response_delete_range`
    /// or `response_range`, whose first pair is the key read).
    func transactionResponses() throws(DefaultsError) -> [EtcdTransactionResult.Response] {
        guard let value = object["responses"] else { return [] }
        guard case .array(let list) = value else { throw malformed("'responses' is not a list of objects") }
        var result: [EtcdTransactionResult.Response] = []
        result.reserveCapacity(list.count)
        for item in list {
            guard case .dictionary(let fields) = item else { throw malformed("'responses' is not a list of objects") }
            let response = EtcdAnswer(object: fields, context: context)
            if let range = try response.child("response_range") {
                result.append(.range(try range.keyValues().first))
            } else if fields["response_put"] != nil {
                result.append(.put)
            } else if fields["response_delete_range"] != nil {
                result.append(.delete)
            } else {
                throw malformed("a transaction's response is none of put, delete and range: \(Self.describe(item))")
            }
        }
        return result
    }
}
