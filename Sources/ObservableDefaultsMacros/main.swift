// The macro plugin: the compiler's message loop, nothing else. All logic lives in Sources/DefaultsMacroKit,
// compiled into this target through the symlink `Kit` (see Package.swift).
// No Foundation here or in the kit: see PluginJSON.swift.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Reads and writes the length-prefixed JSON messages on private copies of stdin/stdout; stdout itself is
/// pointed at stderr so stray output cannot corrupt the channel.
struct Channel {
    let input: Int32
    let output: Int32

    static func open() -> Channel {
        let input = dup(STDIN_FILENO)
        let output = dup(STDOUT_FILENO)
        close(STDIN_FILENO)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        return Channel(input: input, output: output)
    }

    func readExactly(_ count: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress! + filled, count - filled) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            filled += n
        }
        return buffer
    }

    func readMessage() -> [UInt8]? {
        guard let header = readExactly(8) else { return nil }
        var length: UInt64 = 0
        for (index, byte) in header.enumerated() { length |= UInt64(byte) << (8 * UInt64(index)) }
        if length == 0 { return [] }
        guard let body = readExactly(Int(length)) else { return nil }
        return body
    }

    func writeMessage(_ data: [UInt8]) {
        var length = UInt64(data.count)
        var bytes = [UInt8](repeating: 0, count: 8)
        for index in 0..<8 {
            bytes[index] = UInt8(length & 0xFF)
            length >>= 8
        }
        bytes += data
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(output, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { exit(1) }
            written += n
        }
    }
}

let channel = Channel.open()
while let message = channel.readMessage() {
    if let answer = MacroDispatcher.respond(to: message) {
        channel.writeMessage(answer)
    }
}
exit(0)
