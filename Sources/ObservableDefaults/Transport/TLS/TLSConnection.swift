import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A TLS client setup (OpenSSL's `SSL_CTX`): peer verification always on, against the system trust store
/// plus an optional CA file, and an optional client certificate. Shared by every connection of a client.
final class TLSContext: @unchecked Sendable {  // not changed after init; OpenSSL allows SSL_new from any thread
    let library: TLSLibrary
    private let context: OpaquePointer

    /// Uses the library `loaded` (or fails with why it could not be loaded) and loads the files: `caFile` (PEM,
    /// trusted besides the system store), `certificateFile` (PEM chain) with `keyFile` (PEM; `nil`: the
    /// key is in `certificateFile`).
    init(
        caFile: String?, certificateFile: String?, keyFile: String?,
        loaded: Result<TLSLibrary, TLSError> = TLSLibrary.shared
    ) throws(TLSError) {
        library = try loaded.get()
        library.ERR_clear_error()
        guard let method = library.TLS_client_method(), let context = library.SSL_CTX_new(method) else {
            throw TLSError("cannot create a TLS context: \(library.takeErrors() ?? "no reason given")")
        }
        self.context = context
        library.SSL_CTX_set_verify(context, TLSLibrary.verifyPeer, nil)
        _ = library.SSL_CTX_set_default_verify_paths(context)  // no system store is not an error while caFile is given
        _ = library.takeErrors()
        if let caFile {
            try Self.checkReadable(caFile, "CA file")
            guard library.SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw TLSError("cannot use the CA file \(caFile): \(library.takeErrors() ?? "not PEM certificates")")
            }
        }
        if keyFile != nil, certificateFile == nil {
            throw TLSError("a client key file (\(keyFile ?? "")) is given without its certificate file")
        }
        if let certificateFile {
            let keyFile = keyFile ?? certificateFile
            try Self.checkReadable(certificateFile, "client certificate file")
            try Self.checkReadable(keyFile, "client key file")
            guard library.SSL_CTX_use_certificate_chain_file(context, certificateFile) == 1 else {
                throw TLSError(
                    "cannot use the client certificate file \(certificateFile): \(library.takeErrors() ?? "not a PEM certificate")"
                )
            }
            guard library.SSL_CTX_use_PrivateKey_file(context, keyFile, TLSLibrary.fileTypePEM) == 1 else {
                throw TLSError(
                    "cannot use the client key file \(keyFile): \(library.takeErrors() ?? "not a PEM private key")")
            }
            guard library.SSL_CTX_check_private_key(context) == 1 else {
                throw TLSError(
                    "the client key file \(keyFile) does not belong to the certificate in \(certificateFile): \(library.takeErrors() ?? "")"
                )
            }
        }
    }

    private static func checkReadable(_ path: String, _ what: String) throws(TLSError) {
        guard access(path, R_OK) == 0 else {
            throw TLSError("cannot read the \(what) \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Runs the TLS handshake on the connected socket `descriptor` for `host` (a name or an IP address:
    /// the certificate must name it; a name is also sent as SNI), offering the application protocols `alpn`
    /// (ALPN, e.g. `h2`; none: no ALPN). Bounded by the socket's timeouts.
    func connect(descriptor: Int32, host: String, alpn: [String] = []) throws(TLSError) -> TLSSession {
        library.ERR_clear_error()
        guard let ssl = library.SSL_new(context) else {
            throw TLSError("cannot create a TLS connection: \(library.takeErrors() ?? "no reason given")")
        }
        let session = TLSSession(library: library, ssl: ssl)
        guard library.SSL_set_fd(ssl, descriptor) == 1 else {
            throw TLSError("cannot attach TLS to the socket: \(library.takeErrors() ?? "no reason given")")
        }
        let named: Bool
        if Self.isIPAddress(host) {
            named = library.X509_VERIFY_PARAM_set1_ip_asc(library.SSL_get0_param(ssl), host) == 1
        } else {
            named =
                library.SSL_set1_host(ssl, host) == 1
                && host.withCString {
                    library.SSL_ctrl(
                        ssl, TLSLibrary.setHostNameControl, TLSLibrary.hostNameType,
                        UnsafeMutableRawPointer(mutating: $0))
                } == 1
        }
        guard named else {
            throw TLSError("cannot set the host name \(host) to verify: \(library.takeErrors() ?? "no reason given")")
        }
        if !alpn.isEmpty {
            // The wire format: each protocol name preceded by its length in one byte.
            let list = alpn.flatMap { [UInt8(clamping: $0.utf8.count)] + Array($0.utf8.prefix(255)) }
            guard library.SSL_set_alpn_protos(ssl, list, UInt32(list.count)) == 0 else {
                throw TLSError(
                    "cannot offer the protocols \(alpn) (ALPN): \(library.takeErrors() ?? "no reason given")")
            }
        }
        let (result, savedErrno) = withSignalPipeBlocked { (library.SSL_connect(ssl), errno) }
        guard result == 1 else {
            let verification = library.SSL_get_verify_result(ssl)
            if verification != 0 {  // X509_V_OK
                _ = library.takeErrors()
                let why =
                    library.X509_verify_cert_error_string(verification).map { String(cString: $0) }
                    ?? "code \(verification)"
                throw TLSError("the server's certificate is not accepted for \(host): \(why)")
            }
            var error = session.failure(result, errno: savedErrno)
            if !alpn.isEmpty, error.text.contains("no application protocol") {
                // RFC 7301: the server's alert when it speaks none of the protocols offered.
                error = TLSError(
                    "\(Self.noCommonProtocol) (\(alpn.joined(separator: ", "))): it sent the alert no_application_protocol"
                )
            } else if !error.timedOut, error.text == TLSSession.closedText {
                error = TLSError(
                    "the server closed the connection during the TLS handshake (does it serve plain http?)")
            }
            throw TLSError("TLS handshake failed: \(error.text)", timedOut: error.timedOut)
        }
        return session
    }

    /// How a handshake failure begins when the server speaks none of the application protocols offered.
    static let noCommonProtocol = "the server accepts none of the application protocols offered with ALPN"

    private static func isIPAddress(_ host: String) -> Bool {
        var buffer = in6_addr()
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }

    deinit { library.SSL_CTX_free(context) }
}

/// One TLS connection (OpenSSL's `SSL`) over a socket the caller owns and closes; used by one thread at a
/// time. Timeouts are the socket's (`SO_RCVTIMEO`/`SO_SNDTIMEO`): an expired one is a ``TLSError`` with
/// `timedOut`.
final class TLSSession: @unchecked Sendable {
    private let library: TLSLibrary
    private let ssl: OpaquePointer

    fileprivate init(library: TLSLibrary, ssl: OpaquePointer) {
        self.library = library
        self.ssl = ssl
    }

    fileprivate static let closedText = "the connection closed"

    /// The application protocol the server selected with ALPN (`h2`), `nil` when it selected none.
    var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        library.SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// Writes some of `bytes` (at least one); returns how many.
    func write(_ bytes: UnsafeRawBufferPointer) throws(TLSError) -> Int {
        library.ERR_clear_error()
        let (count, savedErrno) = withSignalPipeBlocked {
            (library.SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count)), errno)
        }
        guard count > 0 else { throw failure(count, errno: savedErrno) }
        return Int(count)
    }

    /// Reads into `buffer`; returns how many bytes, 0 when the peer ended the connection.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(TLSError) -> Int {
        library.ERR_clear_error()
        // Reading may write too (key updates), so SIGPIPE is blocked here as well.
        let (count, savedErrno) = withSignalPipeBlocked {
            (library.SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count)), errno)
        }
        if count > 0 { return Int(count) }
        if library.SSL_get_error(ssl, count) == TLSLibrary.errorZeroReturn { return 0 }
        let error = failure(count, errno: savedErrno)
        if error.text == Self.closedText { return 0 }
        throw error
    }

    /// What a failed call with `result` means; `errno` as it was right after the call.
    fileprivate func failure(_ result: Int32, errno savedErrno: Int32) -> TLSError {
        let code = library.SSL_get_error(ssl, result)
        let queued = library.takeErrors()
        switch code {
        case TLSLibrary.errorWantRead, TLSLibrary.errorWantWrite:
            return TLSError("no answer within the timeout", timedOut: true)
        case TLSLibrary.errorZeroReturn:
            return TLSError(Self.closedText)
        case TLSLibrary.errorSyscall:
            if savedErrno == EAGAIN || savedErrno == EWOULDBLOCK {
                return TLSError("no answer within the timeout", timedOut: true)
            }
            if let queued { return TLSError(queued) }
            if savedErrno == 0 { return TLSError(Self.closedText) }
            return TLSError("the connection broke: \(String(cString: strerror(savedErrno)))")
        default:
            guard let queued else { return TLSError("TLS error \(code)") }
            if queued.contains("unexpected eof") { return TLSError(Self.closedText) }
            if queued.contains("certificate required") || queued.contains("alert bad certificate") {
                return TLSError(
                    "\(queued): the server requires a client certificate it trusts (none was given, or it was refused)",
                    turnedDown: true)
            }
            return TLSError(queued)
        }
    }

    deinit { library.SSL_free(ssl) }
}

/// Runs `body` with SIGPIPE blocked on this thread, and discards a SIGPIPE it raised: OpenSSL writes to the
/// socket with plain `send` (no `MSG_NOSIGNAL`), and a write to a connection the peer closed would
/// otherwise end the process.
private func withSignalPipeBlocked<Result>(_ body: () -> Result) -> Result {
    var pipeOnly = sigset_t()
    sigemptyset(&pipeOnly)
    sigaddset(&pipeOnly, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
    let result = body()
    if sigismember(&previous, SIGPIPE) == 0 {
        var pending = sigset_t()
        sigpending(&pending)
        if sigismember(&pending, SIGPIPE) == 1 {
            var noWait = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&pipeOnly, nil, &noWait)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
    return result
}
