import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP port nobody listens on now (bound to port 0, read back, released).
public func freeLoopbackPort() -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(descriptor >= 0, "socket failed")
    defer { close(descriptor) }
    let port = bindLoopback(descriptor, listening: false)
    precondition(port != nil, "bind to a loopback port failed")
    return Int(port!)
}

/// A socket listening on a free loopback port (backlog 16, close-on-exec), and that port; `nil` (errno set)
/// when it cannot listen. For the tests' fake members and proxies.
public func loopbackListener() -> (descriptor: Int32, port: UInt16)? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    guard let port = bindLoopback(descriptor, listening: true) else {
        let saved = errno
        close(descriptor)
        errno = saved
        return nil
    }
    return (descriptor, port)
}

/// Binds `descriptor` to port 0 of 127.0.0.1 (and listens, with `listening`); the port it got.
private func bindLoopback(_ descriptor: Int32, listening: Bool) -> UInt16? {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            bind(descriptor, raw, length) == 0 && (!listening || listen(descriptor, 16) == 0)
                && getsockname(descriptor, raw, &length) == 0
        }
    }
    return bound ? UInt16(bigEndian: address.sin_port) : nil
}

/// A blocking POST of a JSON `body` to `path` of the etcd member at `endpoint` (an IPv4 `http://`
/// address) over a plain HTTP/1.0 socket — no library code, no `URLSession` — with a two-second timeout:
/// the answer's body when the status was 200, else nil. For harness requests (status, auth setup).
public func etcdPost(_ endpoint: URL, _ path: String, _ body: String) -> String? {
    etcdExchange(endpoint, method: "POST", path, body)
}

/// How many watchers the member at `endpoint` serves (`etcd_debugging_mvcc_watcher_total` in its
/// `/metrics`); `nil` when its metrics cannot be read.
public func etcdWatcherCount(_ endpoint: URL) -> Int? {
    etcdGauge(endpoint, "etcd_debugging_mvcc_watcher_total")
}

/// How many client watches the `etcd grpc-proxy` at `endpoint` has attached to a watch it already had
/// upstream (`etcd_grpc_proxy_watchers_coalescing_total` in its `/metrics`); `nil` when its metrics cannot
/// be read.
public func etcdGRPCProxyCoalescingCount(_ endpoint: URL) -> Int? {
    etcdGauge(endpoint, "etcd_grpc_proxy_watchers_coalescing_total")
}

/// How many Watch streams the member at `endpoint` holds open (`etcd_debugging_mvcc_watch_stream_total`
/// in its `/metrics`); `nil` when its metrics cannot be read.
public func etcdWatchStreamCount(_ endpoint: URL) -> Int? {
    etcdGauge(endpoint, "etcd_debugging_mvcc_watch_stream_total")
}

private func etcdGauge(_ endpoint: URL, _ name: String) -> Int? {
    guard let metrics = etcdGet(endpoint, "/metrics"),
        let line = metrics.split(separator: "\n").first(where: { $0.hasPrefix(name + " ") }),
        let value = line.split(separator: " ").last.flatMap({ Double($0) })
    else { return nil }
    return Int(value)
}

/// ``etcdPost(_:_:_:)`` as a GET without a body (an etcd proxy's `/health`).
public func etcdGet(_ endpoint: URL, _ path: String) -> String? {
    etcdExchange(endpoint, method: "GET", path, nil)
}

private func etcdExchange(_ endpoint: URL, method: String, _ path: String, _ body: String?) -> String? {
    guard let host = endpoint.host, let port = endpoint.port,
        let descriptor = connectedIPv4Socket(host: host, port: port, timeout: 2)
    else { return nil }
    defer { close(descriptor) }
    let content = body.map { "Content-Type: application/json\r\nContent-Length: \($0.utf8.count)\r\n" } ?? ""
    let request = Array("\(method) \(path) HTTP/1.0\r\nHost: \(host):\(port)\r\n\(content)\r\n\(body ?? "")".utf8)
    var sent = 0
    while sent < request.count {
        let count = request[sent...].withUnsafeBufferPointer { send(descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { return nil }
        sent += count
    }
    var answer = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = recv(descriptor, &chunk, chunk.count, 0)
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        answer += chunk[0..<count]
    }
    let text = String(decoding: answer, as: UTF8.self)
    guard let statusLine = text.split(separator: "\r\n", maxSplits: 1).first,
        statusLine.split(separator: " ").dropFirst().first == "200",
        let headerEnd = text.range(of: "\r\n\r\n")
    else { return nil }
    return String(text[headerEnd.upperBound...])
}

/// Asks an etcd member whether it has a leader.
enum EtcdStatusProbe {
    /// Whether the member at `url` answers its status with a leader, within two seconds.
    static func hasLeader(_ url: URL) -> Bool {
        etcdPost(url, "/v3/maintenance/status", "{}")?.contains("\"leader\"") == true
    }
}
