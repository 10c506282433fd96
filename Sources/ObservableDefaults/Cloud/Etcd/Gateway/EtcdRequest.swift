import Foundation

/// The JSON bodies of ``EtcdGatewayWire``'s requests.
///
/// The transaction bodies are written directly rather than through `JSONSerialization` (they are on every
/// upload's path): every string in them is base64 or a decimal number, so nothing needs escaping.
enum EtcdRequest {
    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// The `range_end` that makes a range cover every key starting with `prefix`, in base64.
    static func prefixEnd(_ prefix: String) -> String { EtcdRangeRequest.prefixEnd(prefix).base64EncodedString() }

    /// The body of a range read.
    static func rangeBody(_ request: EtcdRangeRequest) -> Data {
        let end = request.rangeEnd.map { #","range_end":"\#($0.base64EncodedString())""# } ?? ""
        return Data(#"{"key":"\#(base64(request.key))"\#(end)}"#.utf8)
    }

    /// The body of a transaction (an empty failure branch is left out).
    static func transactionBody(_ transaction: EtcdTransaction) -> Data {
        // Each key in base64 once: the n-th operation of a branch is usually on the n-th compared key.
        let keys = transaction.compares.map { base64($0.key) }
        func encoded(_ key: String, at index: Int) -> String {
            index < keys.count && transaction.compares[index].key == key ? keys[index] : base64(key)
        }
        var text = ""
        // Grown once: about 120 bytes of JSON per comparison and operation besides the values' base64.
        var capacity = 120 * (transaction.compares.count + transaction.success.count + transaction.failure.count)
        for case .put(_, let value, _) in transaction.success { capacity += (value.count + 2) / 3 * 4 }
        text.reserveCapacity(capacity)
        text += #"{"compare":["#
        for (index, compare) in transaction.compares.enumerated() {
            if index > 0 { text += "," }
            text +=
                #"{"key":"\#(keys[index])","target":"MOD","result":"EQUAL","mod_revision":"\#(compare.modRevision)"}"#
        }
        text += #"],"success":["#
        append(transaction.success, to: &text, encoded)
        if !transaction.failure.isEmpty {
            text += #"],"failure":["#
            append(transaction.failure, to: &text, encoded)
        }
        text += "]}"
        return Data(text.utf8)
    }

    private static func append(
        _ operations: [EtcdTransaction.Operation], to text: inout String, _ encoded: (String, Int) -> String
    ) {
        for (index, operation) in operations.enumerated() {
            if index > 0 { text += "," }
            switch operation {
            case .put(let key, let value, let lease):
                let lease = lease.map { #","lease":"\#($0)""# } ?? ""
                text +=
                    #"{"request_put":{"key":"\#(encoded(key, index))","value":"\#(value.base64EncodedString())"\#(lease)}}"#
            case .delete(let key):
                text += #"{"request_delete_range":{"key":"\#(encoded(key, index))"}}"#
            case .range(let key):
                text += #"{"request_range":{"key":"\#(encoded(key, index))"}}"#
            }
        }
    }

    /// The body of a watch's create request.
    static func watchBody(_ request: EtcdWatchRequest) -> Data {
        let start = request.startRevision
        let prefix = base64(request.prefix)
        let end = prefixEnd(request.prefix)
        return Data(
            #"{"create_request":{"key":"\#(prefix)","range_end":"\#(end)","start_revision":"\#(start)"}}"#.utf8)
    }
}
