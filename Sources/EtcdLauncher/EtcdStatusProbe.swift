import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP port nobody listens on now (bound to port 0, read back, released).
public func freeLoopbackPort() -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(descriptor >= 0, "socket failed")
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
            bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
        }
    }
    precondition(bound, "bind to a loopback port failed")
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Asks an etcd member for its status over a plain HTTP/1.0 socket (no library code, no `URLSession`).
enum EtcdStatusProbe {
    /// Whether the member at `url` (an IPv4 `http://` address) answers its status with a leader, within two seconds.
    static func hasLeader(_ url: URL) -> Bool {
        guard let host = url.host, let port = url.port else { return false }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return false }
        let request = "POST /v3/maintenance/status HTTP/1.0\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        let sent = request.utf8CString.withUnsafeBufferPointer { send(descriptor, $0.baseAddress, $0.count - 1, 0) }
        guard sent > 0 else { return false }
        var answer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            answer += chunk[0 ..< count]
        }
        let text = String(decoding: answer, as: UTF8.self)
        return text.hasPrefix("HTTP/1.") && text.contains(" 200 ") && text.contains("\"leader\"")
    }
}
