import Foundation

/// How the HTTP client's connections reach a member: `http` endpoints speak over the plain socket,
/// `https` ones through TLS (``TLSContext``) set up from an ``EtcdTLS`` once, on the first `https`
/// connection, and shared by every connection of the client. When that setup fails (no OpenSSL 3, an
/// unreadable CA file) the connection fails with its reason and the next `https` connection sets it up
/// again, so a file deployed (or a descriptor freed) after start is used without a restart; `http` ones are
/// unaffected. It also carries how much a connection reads at most (``limits``), the same for requests,
/// probes and watches.
final class EtcdTransport: Sendable {
    /// What a connection reads at most from a member.
    let limits: EtcdReadLimits
    private let settings: EtcdTLS
    /// `nil`: ``TLSLibrary/shared``, loaded only when the first `https` connection needs it.
    private let library: Result<TLSLibrary, TLSError>?
    /// The context once set up (a failed setup is not kept).
    private let context = Locked<TLSContext?>(nil)

    /// A transport using `settings` for `https` endpoints, through `library` (`nil`: ``TLSLibrary/shared``,
    /// loaded at the first `https` request; one that failed to load fails every such request with why),
    /// whose connections read at most `limits`.
    init(
        _ settings: EtcdTLS = EtcdTLS(), library: Result<TLSLibrary, TLSError>? = nil,
        limits: EtcdReadLimits = .standard
    ) {
        self.settings = settings
        self.library = library
        self.limits = limits
    }

    /// Secures the socket `descriptor`, connected to `url`'s member: nothing for `http` (returns `nil`),
    /// the TLS handshake for `https` offering the application protocols `alpn` (none: no ALPN), bounded by
    /// the socket's timeouts.
    func secure(_ descriptor: Int32, url: URL, alpn: [String] = []) throws(EtcdHTTP.Failure) -> TLSSession? {
        guard url.scheme == "https" else { return nil }
        let member = "\(url.host ?? ""):\(url.port ?? 443)"
        do throws(TLSError) {
            return try tlsContext().get().connect(descriptor: descriptor, host: url.host ?? "", alpn: alpn)
        } catch {
            var failure = EtcdHTTP.Failure("TLS with \(member): \(error.text)")
            failure.timedOut = error.timedOut
            failure.rejected = !error.timedOut
            throw failure
        }
    }

    /// What makes two transports' HTTP/2 connections to a member interchangeable: the same trust (CA
    /// file), the same client identity (certificate and key), and the same limit on what a connection itself
    /// reads (header blocks; the limits of answers apply per call). The server name checked is the
    /// endpoint's host, part of the member's URL. A transport given a TLS library of its own (tests) shares
    /// with no other.
    struct ConnectionKey: Hashable, Sendable {
        let caFile: String?
        let clientCertificateFile: String?
        let clientKeyFile: String?
        let headBytes: Int
        let ownLibrary: ObjectIdentifier?
    }

    /// This transport's ``ConnectionKey``.
    var connectionKey: ConnectionKey {
        ConnectionKey(
            caFile: settings.caFile?.standardizedFileURL.path,
            clientCertificateFile: settings.clientCertificateFile?.standardizedFileURL.path,
            clientKeyFile: settings.clientKeyFile?.standardizedFileURL.path, headBytes: limits.headBytes,
            ownLibrary: library == nil ? nil : ObjectIdentifier(self))
    }

    private func tlsContext() -> Result<TLSContext, TLSError> {
        context.withLock { context in
            if let context { return .success(context) }
            let made = Result { () throws(TLSError) in
                try TLSContext(
                    caFile: settings.caFile?.path, certificateFile: settings.clientCertificateFile?.path,
                    keyFile: settings.clientKeyFile?.path, loaded: library ?? TLSLibrary.shared)
            }
            context = try? made.get()
            return made
        }
    }
}
