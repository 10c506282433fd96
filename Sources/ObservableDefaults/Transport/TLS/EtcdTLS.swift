import Foundation

/// TLS settings for an etcd cluster's `https` endpoints (see ``EtcdConfiguration/tls``).
///
/// The server's certificate is always verified: it must chain to the system trust store or to
/// ``caFile``, and name the endpoint's host (its DNS name or IP address). With a client certificate the
/// store also authenticates itself (etcd's `--client-cert-auth`). All files are PEM. `http` endpoints
/// ignore these settings.
public struct EtcdTLS: Sendable, Equatable {
    /// A CA certificate file trusted besides the system store (for a cluster with its own CA);
    /// `$OBSERVABLE_DEFAULTS_CLOUD_CA` in the environment form.
    public var caFile: URL?
    /// The client certificate (chain) to present, for clusters that require one;
    /// `$OBSERVABLE_DEFAULTS_CLOUD_CERT` in the environment form.
    public var clientCertificateFile: URL?
    /// The client certificate's private key; `nil`: it is in ``clientCertificateFile``.
    /// `$OBSERVABLE_DEFAULTS_CLOUD_KEY` in the environment form.
    public var clientKeyFile: URL?

    /// Creates TLS settings; with no arguments: the system trust store, no client certificate.
    public init(caFile: URL? = nil, clientCertificateFile: URL? = nil, clientKeyFile: URL? = nil) {
        self.caFile = caFile
        self.clientCertificateFile = clientCertificateFile
        self.clientKeyFile = clientKeyFile
    }

    /// The settings `environment` names: `OBSERVABLE_DEFAULTS_CLOUD_CA`, `OBSERVABLE_DEFAULTS_CLOUD_CERT`
    /// and `OBSERVABLE_DEFAULTS_CLOUD_KEY` (file paths; empty counts as unset).
    public init(environment: [String: String]) {
        func file(_ name: String) -> URL? {
            environment[name].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        }
        self.init(
            caFile: file("OBSERVABLE_DEFAULTS_CLOUD_CA"), clientCertificateFile: file("OBSERVABLE_DEFAULTS_CLOUD_CERT"),
            clientKeyFile: file("OBSERVABLE_DEFAULTS_CLOUD_KEY"))
    }
}
