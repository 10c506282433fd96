import Foundation

/// One value as the JSON text a cloud server holds: exactly the text the value has in a JSON suite file
/// (pretty-printed, sorted keys), so `etcdctl get` shows what `cat settings.json` would.
enum CloudValueText {
    /// The value's JSON text (dates and data as their JSON-suite strings).
    static func encode(_ value: DefaultsValue) -> Data {
        Data(JSONWriter.encodeValue(value))
    }

    /// The value of JSON text `data` held under `key`, normalised as a JSON suite holds it.
    static func decode(_ data: Data, key: String) throws(DefaultsError) -> DefaultsValue {
        let parsed: DefaultsValue?
        do {
            parsed = try JSONReader.parseDocument(data)
        } catch {
            let preview = String(decoding: data.prefix(80), as: UTF8.self)
            throw DefaultsError(
                .cloud, message: "the server holds a value that is not JSON (\(error.message)): \(preview)", key: key)
        }
        guard let parsed else {
            throw DefaultsError(.cloud, message: "the server holds null, which is not a value", key: key)
        }
        return parsed
    }
}
