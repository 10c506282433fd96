import Foundation
import Testing
@testable import ObservableDefaults

/// Request bodies built without `JSONSerialization`: they must be the JSON etcd's gateway reads (the etcd
/// suites send them for real; here every field is checked, with keys and values that would need escaping).
@Suite struct EtcdRequestTests {
    private func parsed(_ body: Data) throws -> NSDictionary {
        try #require(
            try JSONSerialization.jsonObject(with: body) as? NSDictionary, "\(String(decoding: body, as: UTF8.self))")
    }

    private func b64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    @Test func aCompareAndSwapPutIsTheTransactionJSONWithEveryStringBase64() throws {
        let key = "ns/\"quoted\" \\ back\nslash ü 🚀"
        let value = Data("{\n  \"a\" : \"x\\\"y\"\n}".utf8)
        let body = EtcdRequest.transactionBody(.compareAndSwap(key: key, value: value, expected: 9_007_199_254_740_993))
        let expected: NSDictionary = [
            "compare": [["key": b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": "9007199254740993"]],
            "success": [["request_put": ["key": b64(key), "value": value.base64EncodedString()]]]
        ]
        #expect(try parsed(body) == expected)
    }

    @Test func aCompareAndSwapDeleteOfAnAbsentKeyComparesWithRevisionZero() throws {
        let body = EtcdRequest.transactionBody(.compareAndSwap(key: "ns/k", value: nil, expected: 0))
        let expected: NSDictionary = [
            "compare": [["key": b64("ns/k"), "target": "MOD", "result": "EQUAL", "mod_revision": "0"]],
            "success": [["request_delete_range": ["key": b64("ns/k")]]]
        ]
        #expect(try parsed(body) == expected)
    }

    /// The text a write uploads is encoded once, when it is made, and is exactly the value's JSON text.
    @Test func aPendingWriteCarriesTheValuesJSONText() {
        let value = DefaultsValue.dictionary(["b": .string("x\"y"), "a": .array([.integer(1), .bool(true)])])
        let write = PendingWrite(value: value, baseRevision: 3, generation: 1)
        #expect(write.text == CloudValueText.encode(value))
        #expect(PendingWrite(value: nil, baseRevision: 3, generation: 1).text == nil)
    }
}
