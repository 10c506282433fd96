import Foundation

/// Where a request goes, read from its URL once: the store sends the same requests to the same member
/// over and over, and each of Foundation's URL accessors costs about a microsecond on the upload path.
struct EtcdTarget: Sendable {
    let url: URL
    /// `scheme://host:port`: what a kept-alive connection is kept for (see ``EtcdConnectionPool``).
    let member: String
    /// The request line and `Host` header, `POST /path HTTP/1.1\r\nHost: host:port\r\n`.
    let head: String

    init(_ url: URL) {
        self.url = url
        let host = url.host ?? "localhost"
        let port = url.port ?? EtcdHTTP.defaultPort(url)
        member = "\(url.scheme ?? "http")://\(url.host ?? ""):\(port)"
        head = "POST \(url.path.isEmpty ? "/" : url.path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
    }
}
