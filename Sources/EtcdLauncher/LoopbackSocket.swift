#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP socket (close-on-exec) connected to `host`, an IPv4 address such as `127.0.0.1`, at
/// `port`; `nil` when creating or connecting it failed, with `errno` saying why. `timeout` (seconds), when
/// given, is set as the socket's send and receive timeout before connecting (the send timeout also bounds
/// `connect`). For the tests' and the benchmark's raw etcd traffic, which must not use the library.
public func connectedIPv4Socket(host: String, port: Int, timeout: Int? = nil) -> Int32? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    if let timeout {
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr(host)
    address.sin_port = UInt16(clamping: port).bigEndian
    let connected = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    if connected { return descriptor }
    let code = errno
    close(descriptor)
    errno = code
    return nil
}
