import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Why TLS could not be set up or a TLS exchange failed; `text` says it for a person.
struct TLSError: Error, Sendable {
    let text: String
    /// The peer did not answer within the socket's timeout (`SO_RCVTIMEO`/`SO_SNDTIMEO`).
    var timedOut = false
    /// The peer turned the connection down for its certificates (an alert such as "certificate required").
    var turnedDown = false
    init(_ text: String, timedOut: Bool = false, turnedDown: Bool = false) {
        self.text = text
        self.timedOut = timedOut
        self.turnedDown = turnedDown
    }
}

/// OpenSSL 3 (`libssl.so.3`, `libcrypto.so.3`), loaded at run time with `dlopen`: the few functions a TLS
/// client needs, typed. Not linked because the package has no dependencies and OpenSSL's headers
/// (`libssl-dev`) are not on a fresh machine, while the libraries are (the toolchain's FoundationNetworking
/// links libcurl, which links them). Loaded once per process, on the first `https` endpoint (again at the
/// next one while loading fails).
final class TLSLibrary: @unchecked Sendable {  // immutable after loading; OpenSSL 3 is thread-safe
    /// The Debian/Ubuntu package holding the libraries, for error messages.
    static let package = "libssl3"

    /// The process's library, or why it could not be loaded. Only a success is kept: after a failure (no
    /// descriptor left for `dlopen`, the package installed later) the next use tries again.
    static var shared: Result<TLSLibrary, TLSError> {
        loaded.withLock { loaded in
            if let loaded { return .success(loaded) }
            let result = load()
            if case .success(let library) = result { loaded = library }
            return result
        }
    }

    private static let loaded = Locked<TLSLibrary?>(nil)

    /// Loads `ssl` and `crypto` (file names for `dlopen`) and looks up every function; the error names the
    /// library, the missing function and the package.
    static func load(ssl: String = "libssl.so.3", crypto: String = "libcrypto.so.3") -> Result<TLSLibrary, TLSError> {
        do throws(TLSError) {
            let cryptoHandle = try open(crypto)
            let sslHandle = try open(ssl)
            return .success(
                try TLSLibrary(
                    ssl: Symbols(handle: sslHandle, library: ssl),
                    crypto: Symbols(handle: cryptoHandle, library: crypto)))
        } catch {
            return .failure(error)
        }
    }

    private static func open(_ name: String) throws(TLSError) -> UnsafeMutableRawPointer {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "not found"
            throw TLSError(
                "https endpoints need OpenSSL 3's \(name) (Debian/Ubuntu package \(package)), which could not be loaded: \(why)"
            )
        }
        return handle
    }

    /// Looks up typed functions in one loaded library.
    private struct Symbols {
        let handle: UnsafeMutableRawPointer
        let library: String
        func callAs<Function>(_ name: String, _: Function.Type = Function.self) throws(TLSError) -> Function {
            guard let symbol = dlsym(handle, name) else {
                throw TLSError(
                    "\(library) has no function \(name) (OpenSSL 3 is needed: Debian/Ubuntu package \(TLSLibrary.package))"
                )
            }
            return unsafeBitCast(symbol, to: Function.self)
        }
    }

    typealias Pointer = OpaquePointer
    let OPENSSL_init_ssl: @convention(c) (UInt64, UnsafeRawPointer?) -> Int32
    let TLS_client_method: @convention(c) () -> Pointer?
    let SSL_CTX_new: @convention(c) (Pointer?) -> Pointer?
    let SSL_CTX_free: @convention(c) (Pointer?) -> Void
    let SSL_CTX_set_verify: @convention(c) (Pointer?, Int32, UnsafeRawPointer?) -> Void
    let SSL_CTX_set_default_verify_paths: @convention(c) (Pointer?) -> Int32
    let SSL_CTX_load_verify_locations: @convention(c) (Pointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let SSL_CTX_use_certificate_chain_file: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    let SSL_CTX_use_PrivateKey_file: @convention(c) (Pointer?, UnsafePointer<CChar>?, Int32) -> Int32
    let SSL_CTX_check_private_key: @convention(c) (Pointer?) -> Int32
    let SSL_new: @convention(c) (Pointer?) -> Pointer?
    let SSL_free: @convention(c) (Pointer?) -> Void
    let SSL_set_fd: @convention(c) (Pointer?, Int32) -> Int32
    let SSL_set1_host: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    let SSL_get0_param: @convention(c) (Pointer?) -> Pointer?
    let X509_VERIFY_PARAM_set1_ip_asc: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    let SSL_ctrl: @convention(c) (Pointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int
    let SSL_connect: @convention(c) (Pointer?) -> Int32
    /// Returns 0 on success (unlike most OpenSSL functions).
    let SSL_set_alpn_protos: @convention(c) (Pointer?, UnsafePointer<UInt8>?, UInt32) -> Int32
    let SSL_get0_alpn_selected:
        @convention(c) (Pointer?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt32>?) -> Void
    let SSL_read: @convention(c) (Pointer?, UnsafeMutableRawPointer?, Int32) -> Int32
    let SSL_write: @convention(c) (Pointer?, UnsafeRawPointer?, Int32) -> Int32
    let SSL_get_error: @convention(c) (Pointer?, Int32) -> Int32
    let SSL_get_verify_result: @convention(c) (Pointer?) -> Int
    let X509_verify_cert_error_string: @convention(c) (Int) -> UnsafePointer<CChar>?
    let ERR_get_error: @convention(c) () -> UInt
    let ERR_clear_error: @convention(c) () -> Void
    let ERR_error_string_n: @convention(c) (UInt, UnsafeMutablePointer<CChar>?, Int) -> Void

    // Constants from OpenSSL 3's headers.
    static let initNoAtExit: UInt64 = 0x0008_0000  // OPENSSL_INIT_NO_ATEXIT
    static let initLoadSSLStrings: UInt64 = 0x0020_0000  // OPENSSL_INIT_LOAD_SSL_STRINGS
    static let initLoadCryptoStrings: UInt64 = 0x0000_0002  // OPENSSL_INIT_LOAD_CRYPTO_STRINGS
    static let verifyPeer: Int32 = 1  // SSL_VERIFY_PEER
    static let fileTypePEM: Int32 = 1  // SSL_FILETYPE_PEM
    static let setHostNameControl: Int32 = 55  // SSL_CTRL_SET_TLSEXT_HOSTNAME
    static let hostNameType = 0  // TLSEXT_NAMETYPE_host_name
    static let errorSSL: Int32 = 1, errorWantRead: Int32 = 2, errorWantWrite: Int32 = 3
    static let errorSyscall: Int32 = 5, errorZeroReturn: Int32 = 6

    private init(ssl: Symbols, crypto: Symbols) throws(TLSError) {
        OPENSSL_init_ssl = try ssl.callAs("OPENSSL_init_ssl")
        TLS_client_method = try ssl.callAs("TLS_client_method")
        SSL_CTX_new = try ssl.callAs("SSL_CTX_new")
        SSL_CTX_free = try ssl.callAs("SSL_CTX_free")
        SSL_CTX_set_verify = try ssl.callAs("SSL_CTX_set_verify")
        SSL_CTX_set_default_verify_paths = try ssl.callAs("SSL_CTX_set_default_verify_paths")
        SSL_CTX_load_verify_locations = try ssl.callAs("SSL_CTX_load_verify_locations")
        SSL_CTX_use_certificate_chain_file = try ssl.callAs("SSL_CTX_use_certificate_chain_file")
        SSL_CTX_use_PrivateKey_file = try ssl.callAs("SSL_CTX_use_PrivateKey_file")
        SSL_CTX_check_private_key = try ssl.callAs("SSL_CTX_check_private_key")
        SSL_new = try ssl.callAs("SSL_new")
        SSL_free = try ssl.callAs("SSL_free")
        SSL_set_fd = try ssl.callAs("SSL_set_fd")
        SSL_set1_host = try ssl.callAs("SSL_set1_host")
        SSL_get0_param = try ssl.callAs("SSL_get0_param")
        SSL_ctrl = try ssl.callAs("SSL_ctrl")
        SSL_connect = try ssl.callAs("SSL_connect")
        SSL_set_alpn_protos = try ssl.callAs("SSL_set_alpn_protos")
        SSL_get0_alpn_selected = try ssl.callAs("SSL_get0_alpn_selected")
        SSL_read = try ssl.callAs("SSL_read")
        SSL_write = try ssl.callAs("SSL_write")
        SSL_get_error = try ssl.callAs("SSL_get_error")
        SSL_get_verify_result = try ssl.callAs("SSL_get_verify_result")
        X509_VERIFY_PARAM_set1_ip_asc = try crypto.callAs("X509_VERIFY_PARAM_set1_ip_asc")
        X509_verify_cert_error_string = try crypto.callAs("X509_verify_cert_error_string")
        ERR_get_error = try crypto.callAs("ERR_get_error")
        ERR_clear_error = try crypto.callAs("ERR_clear_error")
        ERR_error_string_n = try crypto.callAs("ERR_error_string_n")
        // Before any other call: without OPENSSL_INIT_NO_ATEXIT, OpenSSL frees its global state in an
        // atexit handler, and a process that calls exit() while its sync or watch thread is inside SSL_read
        // crashes (SIGSEGV at exit, seen in about 1 of 20 runs of a writer that exits at once).
        guard OPENSSL_init_ssl(Self.initNoAtExit | Self.initLoadSSLStrings | Self.initLoadCryptoStrings, nil) == 1
        else {
            throw TLSError("OpenSSL could not be initialized (OPENSSL_init_ssl failed)")
        }
    }

    /// The calling thread's OpenSSL error queue as text (emptied), or `nil` when it is empty.
    func takeErrors() -> String? {
        var texts: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            texts.append(
                Self.reason(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return texts.isEmpty ? nil : texts.joined(separator: "; ")
    }

    /// `error:0A000086:SSL routines::certificate verify failed` → `certificate verify failed`.
    private static func reason(_ text: String) -> String {
        guard let last = text.split(separator: ":", omittingEmptySubsequences: false).last, !last.isEmpty else {
            return text
        }
        return String(last)
    }
}
