import Foundation

/// Where an etcd-backed ``CloudKeyValueStore`` syncs: the cluster's endpoints, the namespace (key prefix)
/// its keys live under, optional credentials, and tuning.
///
/// The password never appears in text made from a configuration: its `description` (`print`, string
/// interpolation), `debugDescription` and reflection (`dump`, `Mirror`) show `***` in its place, and the
/// errors of ``init(url:environment:)`` show the address with its password replaced the same way.
public struct EtcdConfiguration: Sendable, Equatable {
    /// The members' client URLs (`http://host:2379`, or `https://host:2379` for TLS, see ``tls``); tried in
    /// order, the next one when a member cannot be reached.
    ///
    /// Credentials in a URL (`http://user:password@host:2379`) are taken out of it, so no message naming
    /// an endpoint shows them; they become ``user`` and ``password`` when no ``user`` is set.
    public var endpoints: [URL] {
        didSet { takeCredentialsOutOfEndpoints() }
    }
    /// The namespace: a key `k` is stored in etcd as `namespace/k`.
    public var namespace: String
    /// The etcd user to log in as, if the cluster has authentication enabled.
    public var user: String?
    /// The user's password.
    public var password: String?
    /// How `https` endpoints are verified, and the client certificate to present.
    public var tls: EtcdTLS
    /// The directory of the offline-first local copy (see ``CloudKeyValueStore``); `nil`: the default state
    /// directory (`$OBSERVABLE_DEFAULTS_STATE_DIRECTORY`, else `$XDG_STATE_HOME/observable-defaults`, else
    /// `~/.local/state/observable-defaults`).
    public var stateDirectory: URL?
    /// The limits local writes must keep.
    public var limits: CloudLimits
    /// How long one request may take before the member counts as unreachable (seconds).
    public var requestTimeout: TimeInterval
    /// How often the watched member is probed for health while the watch is quiet (seconds): a hung member
    /// keeps its connection open but stops answering.
    public var probeInterval: TimeInterval
    /// The most operations etcd accepts in one transaction: its `--max-txn-ops` (128 unless the cluster
    /// was started with another). A batch (``CloudKeyValueStore/performBatchUpdates(_:)``) of more keys is
    /// uploaded in parts of at most this many operations, and the store says so on its error channel; an
    /// update's transaction counts one operation more (its marker). A smaller limit found on the server
    /// splits further.
    public var maxTransactionOperations = 128
    /// How the store speaks to the members: etcd's native gRPC over HTTP/2 (``Transport/grpc``, the
    /// default, as etcd's own clients) or its JSON gateway over HTTP/1.1 (``Transport/gateway``). In a cloud address:
    /// `?transport=gateway` or `?transport=grpc` after the namespace.
    public var transport: Transport = .standard
    /// Whether the store talks to each member over the HTTP/2 connection the process's other stores use
    /// (`true`, the default), or over connections of its own (`false`). With ``Transport/grpc`` the stores
    /// of one process that reach a cluster the same way (the same ``endpoints`` in any order, the same ``tls``
    /// files, the same limits on header blocks;
    /// the etcd ``user`` may differ: tokens travel per call) share one connection to it and each watches on
    /// a stream of it, as etcd's own Go client shares one connection among its calls and watches: a member
    /// then spends one connection's memory on the process instead of one per store. The
    /// connection closes when the last store using it goes. The gateway (``Transport/gateway``) keeps a
    /// connection pool per store either way.
    ///
    /// Give a store its own connections when it must not share their fate with other stores: a call of any
    /// store that times out closes the shared connection (a hung member holds all of its streams), and the
    /// other stores' watches are made again on a new one — they lose nothing, but they do notice; or when
    /// the stores of one process stand for separate machines (a simulation, a benchmark of a fleet).
    public var sharesConnections = true

    /// How a store speaks to etcd's members.
    public enum Transport: String, Sendable, Equatable, CaseIterable {
        /// etcd's native gRPC API over HTTP/2 (h2c on plain TCP, ALPN `h2` with TLS); it also goes through
        /// `etcd grpc-proxy`.
        case grpc
        /// etcd's v3 JSON gateway over HTTP/1.1 (`POST /v3/kv/range` and so on), served by every member
        /// (not by `etcd grpc-proxy`).
        case gateway

        /// The transport a configuration uses unless told otherwise.
        static let standard = Transport.grpc

    }

    /// Creates a configuration.
    public init(
        endpoints: [URL], namespace: String, user: String? = nil, password: String? = nil, tls: EtcdTLS = EtcdTLS(),
        stateDirectory: URL? = nil, limits: CloudLimits = .iCloud, requestTimeout: TimeInterval = 3,
        probeInterval: TimeInterval = 1
    ) {
        self.endpoints = endpoints
        self.namespace = namespace
        self.user = user
        self.password = password
        self.tls = tls
        self.stateDirectory = stateDirectory
        self.limits = limits
        self.requestTimeout = requestTimeout
        self.probeInterval = probeInterval
        takeCredentialsOutOfEndpoints()
    }

    /// Removes `user:password@` from every endpoint, and keeps the first one found as ``user`` and
    /// ``password`` unless a user is set already.
    private mutating func takeCredentialsOutOfEndpoints() {
        guard endpoints.contains(where: { $0.user != nil || $0.password != nil }) else { return }
        var found: (user: String?, password: String?)?
        let cleaned = endpoints.map { endpoint -> URL in
            guard endpoint.user != nil || endpoint.password != nil,
                var parts = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)
            else { return endpoint }
            if found == nil { found = (parts.user, parts.password) }
            (parts.user, parts.password) = (nil, nil)
            return parts.url ?? endpoint
        }
        endpoints = cleaned  // didSet does not run again for a property set in its own observer
        if user == nil, let found { (user, password) = found }
    }

    /// Parses `etcd://host:2379,host2:2379/namespace`, the form of `$OBSERVABLE_DEFAULTS_CLOUD`;
    /// `user:password@` may precede the hosts. `etcds://` or `https://` instead: the members serve TLS
    /// (`http://` is the same as `etcd://`). The TLS files come from `environment`, see
    /// ``EtcdTLS/init(environment:)``. A query after the namespace chooses the ``transport``:
    /// `?transport=gateway` or `?transport=grpc`.
    ///
    /// An error names the address with its password replaced by `***` (`etcd://root:***@host/ns`).
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(DefaultsError)
    {
        func bad(_ why: String) -> DefaultsError {
            DefaultsError(
                .cloud,
                message:
                    "'\(Self.redactingCredentials(in: text))' is not a cloud address: \(why); expected etcd://[user:password@]host:port[,host:port…]/namespace[?transport=gateway|grpc] (etcds:// for TLS)"
            )
        }
        let schemes = ["etcd://": "http", "http://": "http", "etcds://": "https", "https://": "https"]
        guard let scheme = schemes.first(where: { text.hasPrefix($0.key) })?.value else {
            throw bad("it does not start with etcd://, etcds://, http:// or https://")
        }
        var rest = Substring(text.drop(while: { $0 != "/" }).dropFirst(2))
        guard let slash = rest.firstIndex(of: "/") else { throw bad("the namespace after the hosts is missing") }
        var namespace = String(rest[rest.index(after: slash)...])
        rest = rest[..<slash]
        var transport = Transport.standard
        if let question = namespace.lastIndex(of: "?") {
            transport = try Self.transport(fromQuery: namespace[namespace.index(after: question)...], bad)
            namespace = String(namespace[..<question])
        }
        var user: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at].split(separator: ":", maxSplits: 1).map {
                $0.removingPercentEncoding ?? String($0)
            }
            user = credentials.first
            password = credentials.count > 1 ? credentials[1] : nil
            rest = rest[rest.index(after: at)...]
        }
        var endpoints: [URL] = []
        for host in rest.split(separator: ",") {
            guard let url = URL(string: "\(scheme)://\(host)"), url.host != nil, url.port != nil else {
                // An '@' after the first '/' may end a password holding '/': then `host` is part of it.
                if namespace.contains("@") { throw bad("a host is not host:port (a '/' in a password is written %2F)") }
                throw bad("'\(host)' is not host:port")
            }
            endpoints.append(url)
        }
        guard !endpoints.isEmpty else { throw bad("no host is given") }
        guard !namespace.isEmpty else { throw bad("the namespace is empty") }
        self.init(
            endpoints: endpoints, namespace: namespace, user: user, password: password,
            tls: EtcdTLS(environment: environment))
        self.transport = transport
    }

    /// The transport a cloud address's query chooses (`transport=gateway`, `transport=grpc`); any other
    /// query, or a transport this build does not have, is an error made by `bad`.
    private static func transport(
        fromQuery query: Substring, _ bad: (String) -> DefaultsError
    ) throws(DefaultsError) -> Transport {
        let accepted = Transport.allCases.map { "?transport=\($0.rawValue)" }.joined(separator: " or ")
        let parts = query.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, parts[0] == "transport" else {
            throw bad("the query '?\(query)' is not understood, expected \(accepted)")
        }
        guard let transport = Transport(rawValue: String(parts[1])) else {
            throw bad("'\(parts[1])' is not a transport, expected \(accepted)")
        }
        return transport
    }

    /// The etcd key prefix of this namespace (`namespace/`).
    var keyPrefix: String { namespace + "/" }

    /// `text` (a cloud address, valid or not) with the password of its `user:password@` replaced by
    /// `***`: `etcd://root:***@127.0.0.1/ns`. Everything from the start of the hosts to the last `@` counts
    /// as credentials, so a password holding `/` or `@` is hidden too; only the user name before the first
    /// `:` is kept (all of it is hidden when it has no `:` or holds a `/`). Text without `@` is returned as it is.
    static func redactingCredentials(in text: String) -> String {
        let start = text.range(of: "://").map(\.upperBound) ?? text.startIndex
        guard let at = text[start...].lastIndex(of: "@") else { return text }
        let credentials = text[start..<at]
        var kept = "***"
        if let colon = credentials.firstIndex(of: ":"), !credentials[..<colon].contains("/") {
            kept = String(credentials[..<colon]) + ":***"
        }
        return String(text[..<start]) + kept + String(text[at...])
    }
}

extension EtcdConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The configuration as a cloud address, the password shown as `***`:
    /// `etcd://root:***@10.0.0.1:2379,10.0.0.2:2379/fleet` (`etcds://` when the first endpoint is `https`;
    /// `?transport=…` at the end unless the ``transport`` is the default).
    public var description: String {
        let scheme = endpoints.first?.scheme == "https" ? "etcds" : "etcd"
        let hosts = endpoints.map { endpoint in
            guard let host = endpoint.host else { return endpoint.absoluteString }
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return bracketed + (endpoint.port.map { ":\($0)" } ?? "")
        }
        let credentials = user.map { "\($0)\(password == nil ? "" : ":***")@" } ?? (password == nil ? "" : ":***@")
        let query = transport == .standard ? "" : "?transport=\(transport.rawValue)"
        return "\(scheme)://\(credentials)\(hosts.joined(separator: ","))/\(namespace)\(query)"
    }

    /// Every setting, the password shown as `***`.
    public var debugDescription: String {
        let fields = customMirror.children.map { "\($0.label ?? ""): \(String(reflecting: $0.value))" }
        return "EtcdConfiguration(\(fields.joined(separator: ", ")))"
    }

    /// The settings as `dump` and `Mirror` show them: the password is `***` (or `nil` when there is none).
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "endpoints": endpoints, "namespace": namespace, "user": user as Any,
                "password": (password == nil ? nil : "***") as String? as Any, "tls": tls,
                "stateDirectory": stateDirectory as Any,
                "limits": limits, "requestTimeout": requestTimeout, "probeInterval": probeInterval,
                "maxTransactionOperations": maxTransactionOperations, "transport": transport,
                "sharesConnections": sharesConnections
            ], displayStyle: .struct)
    }
}
