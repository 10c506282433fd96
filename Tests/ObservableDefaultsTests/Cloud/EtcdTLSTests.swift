import EtcdLauncher
import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Cloud stores on etcd members that serve TLS (certificates in `Fixtures/tls/`, see its README): syncing
/// with the CA file, and a clear error — values kept, nothing hung or crashed — for an untrusted
/// certificate, a name the certificate does not hold, a missing client certificate, TLS to a plain member
/// and plain HTTP to a TLS member, and etcd's error answers over TLS. Each test has its own member.
@Suite(.serialized, EtcdCluster.required) struct EtcdTLSTests {
    let directory = TemporaryDirectory()

    static let ca = Fixtures.url("tls/ca.pem")
    static let server = EtcdMemberTLS(
        certificateFile: Fixtures.url("tls/server.pem"), keyFile: Fixtures.url("tls/server-key.pem"))
    static let clientCertificate = EtcdTLS(
        caFile: ca, clientCertificateFile: Fixtures.url("tls/client.pem"),
        clientKeyFile: Fixtures.url("tls/client-key.pem"))

    /// A store ("machine") with TLS settings.
    /// With a user, requests get 10 s rather than 2: etcd hashes the password of a login with bcrypt, which
    /// on a busy machine can take longer than 2 s.
    func machine(
        _ endpoints: [URL], _ namespace: String, _ name: String, tls: EtcdTLS, user: String? = nil,
        password: String? = nil
    ) throws -> CloudKeyValueStore {
        try CloudKeyValueStore(
            etcd: EtcdConfiguration(
                endpoints: endpoints, namespace: namespace, user: user, password: password, tls: tls,
                stateDirectory: directory.file(name), requestTimeout: user == nil ? 2 : 10, probeInterval: 0.5))
    }

    /// A store that must not reach the cluster: its write stays local, `synchronize()` fails, and its error
    /// channel gets an error containing every one of `texts`. When the refusal is `definite` (a turned-down
    /// handshake is a definite "no"), `synchronize()` returns before its timeout could end it.
    func expectRefused(
        _ store: CloudKeyValueStore, saying texts: [String], definite: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        store.set("local", forKey: "kept")
        // A definite "no" ends the wait: a timeout it does not reach on any machine, however busy.
        let timeout: TimeInterval = definite ? 30 : 3
        let deadline = ContinuousClock.now + .seconds(timeout)
        #expect(store.synchronize(timeout: timeout) == false, sourceLocation: sourceLocation)
        if definite {
            #expect(
                ContinuousClock.now < deadline,
                "synchronize() waited out its timeout: the refusal was not a definite no",
                sourceLocation: sourceLocation)
        }
        let matches: (DefaultsError) -> Bool = { error in texts.allSatisfy { error.message.contains($0) } }
        let found = eventually(timeout: .seconds(30)) { errors.errors.contains(where: matches) }
        #expect(found, "no error with \(texts) among \(errors.errors.map(\.message))", sourceLocation: sourceLocation)
        if let error = errors.errors.first(where: matches) { print("TLS error reported: \(error.message)") }
        #expect(store.string(forKey: "kept") == "local", sourceLocation: sourceLocation)
    }

    @Test func storesSyncOverTLSWithTheCAFileInBothDirectionsAndAcrossProcesses() throws {
        let node = try EtcdCluster(members: 1, tls: Self.server)
        #expect(node.endpoints[0].scheme == "https")
        let namespace = freshNamespace()
        let a = try machine(node.endpoints, namespace, "a", tls: EtcdTLS(caFile: Self.ca))
        let b = try machine(node.endpoints, namespace, "b", tls: EtcdTLS(caFile: Self.ca))
        #expect(b.synchronize())
        let heardByB = CloudRecorder()
        let observation = b.observe { heardByB.record($0) }
        defer { observation.cancel() }
        a.set("dark", forKey: "theme")
        #expect(a.synchronize())
        #expect(heardByB.waitFor(key: "theme", reason: .serverChange))
        #expect(b.string(forKey: "theme") == "dark")
        // What went over TLS is in etcd, read over the member's plain port (no library TLS code).
        #expect(try rawEtcdValue(node.plainEndpoints[0], namespace, "theme") == "\"dark\"")

        // Another process, configured from the environment, writes over TLS; this one hears it on its watch.
        let agent = Process()
        agent.executableURL = TestAgent.executableURL
        agent.arguments = [
            "cloud", node.endpoints[0].absoluteString, namespace, directory.file("agent").path, "set", "port",
            "int:8080"
        ]
        agent.environment = ProcessInfo.processInfo.environment.merging(["OBSERVABLE_DEFAULTS_CLOUD_CA": Self.ca.path])
        { $1 }
        try agent.run()
        agent.waitUntilExit()
        #expect(agent.terminationStatus == 0)
        #expect(heardByB.waitFor(key: "port", reason: .serverChange))
        #expect(b.longLong(forKey: "port") == 8080)
        #expect(heardByB.changes.allSatisfy { $0.reason == .serverChange })
    }

    /// A process that writes over TLS and exits at once, while its sync and watch threads are still inside
    /// OpenSSL, exits cleanly: OpenSSL's own at-exit clean-up (which freed its state under those threads and
    /// crashed about 1 exit in 20 with SIGSEGV) is turned off when the library is loaded.
    @Test func writersThatExitAtOnceOverTLSExitCleanly() throws {
        let node = try EtcdCluster(members: 1, tls: Self.server)
        let namespace = freshNamespace()
        var statuses: [Int32] = []
        for round in 0..<30 {
            let agent = Process()
            agent.executableURL = TestAgent.executableURL
            agent.arguments = [
                "cloud", node.endpoints[0].absoluteString, namespace, directory.file("exit-\(round)").path, "set",
                "round\(round)", "int:\(round)"
            ]
            agent.environment = ProcessInfo.processInfo.environment.merging([
                "OBSERVABLE_DEFAULTS_CLOUD_CA": Self.ca.path
            ]) { $1 }
            agent.standardOutput = FileHandle.nullDevice
            try agent.run()
            agent.waitUntilExit()
            statuses.append(
                agent.terminationReason == .uncaughtSignal ? -agent.terminationStatus : agent.terminationStatus)
        }
        #expect(statuses.allSatisfy { $0 == 0 }, "exit statuses (negative: killed by that signal): \(statuses)")
        // Each writer starts without a local copy, so each writes a key of its own (a key another one wrote
        // first would be a conflict the server wins).
        #expect(try rawEtcdValue(node.plainEndpoints[0], namespace, "round29") == "29")
    }

    @Test func anUntrustedCertificateIsAClearErrorNamingTheEndpoint() throws {
        let node = try EtcdCluster(members: 1, tls: Self.server)
        let endpoint = node.endpoints[0].absoluteString
        // The system store only, then a CA file of another CA: neither trusts the test CA.
        let systemOnly = try machine(node.endpoints, freshNamespace(), "s", tls: EtcdTLS())
        expectRefused(
            systemOnly, saying: [endpoint, "certificate is not accepted", "unable to get local issuer certificate"])
        let otherCA = try machine(
            node.endpoints, freshNamespace(), "o", tls: EtcdTLS(caFile: Fixtures.url("tls/other-ca.pem")))
        expectRefused(otherCA, saying: [endpoint, "certificate is not accepted"])
    }

    @Test func aCertificateForAnotherNameIsRefusedForAnIPAddressAndForAHostName() throws {
        let node = try EtcdCluster(
            members: 1,
            tls: EtcdMemberTLS(
                certificateFile: Fixtures.url("tls/elsewhere.pem"), keyFile: Fixtures.url("tls/elsewhere-key.pem")))
        let byAddress = node.endpoints[0]
        let byName = try #require(URL(string: "https://localhost:\(byAddress.port ?? 0)"))
        let viaAddress = try machine([byAddress], freshNamespace(), "ip", tls: EtcdTLS(caFile: Self.ca))
        expectRefused(
            viaAddress,
            saying: [byAddress.absoluteString, "certificate is not accepted for 127.0.0.1", "IP address mismatch"])
        let viaName = try machine([byName], freshNamespace(), "name", tls: EtcdTLS(caFile: Self.ca))
        expectRefused(
            viaName, saying: [byName.absoluteString, "certificate is not accepted for localhost", "hostname mismatch"])
    }

    @Test func aRequiredClientCertificateWorksWhenGivenAndIsAClearErrorWhenNot() throws {
        let node = try EtcdCluster(
            members: 1,
            tls: EtcdMemberTLS(
                certificateFile: Self.server.certificateFile, keyFile: Self.server.keyFile, clientCA: Self.ca))
        let namespace = freshNamespace()
        let without = try machine(node.endpoints, namespace, "without", tls: EtcdTLS(caFile: Self.ca))
        expectRefused(without, saying: [node.endpoints[0].absoluteString, "the server requires a client certificate"])

        let with = try machine(node.endpoints, namespace, "with", tls: Self.clientCertificate)
        let watcher = try machine(node.endpoints, namespace, "watcher", tls: Self.clientCertificate)
        #expect(watcher.synchronize())
        let heard = CloudRecorder()
        let observation = watcher.observe { heard.record($0) }
        defer { observation.cancel() }
        with.set(42, forKey: "answer")
        #expect(with.synchronize())
        #expect(heard.waitFor(key: "answer", reason: .serverChange))
        #expect(watcher.longLong(forKey: "answer") == 42)
    }

    @Test func aClientKeyThatCannotBeReadIsAClearErrorNamingTheFile() throws {
        let node = try EtcdCluster(members: 1, tls: Self.server)
        let missing = directory.file("no-such-key.pem")
        let store = try machine(
            node.endpoints, freshNamespace(), "k",
            tls: EtcdTLS(
                caFile: Self.ca, clientCertificateFile: Fixtures.url("tls/client.pem"), clientKeyFile: missing))
        expectRefused(store, saying: ["cannot read the client key file \(missing.path)", "No such file or directory"])
    }

    /// A daemon started before its key file was deployed: refused with the file named, then, once the file
    /// is there, the next connection sets TLS up again and the write made meanwhile lands (no restart).
    @Test func aClientKeyDeployedAfterStartIsUsedWithoutARestart() throws {
        let node = try EtcdCluster(members: 1, tls: Self.server)
        let namespace = freshNamespace()
        let later = directory.file("later-key.pem")
        let store = try machine(
            node.endpoints, namespace, "later",
            tls: EtcdTLS(
                caFile: Self.ca, clientCertificateFile: Fixtures.url("tls/client.pem"), clientKeyFile: later))
        expectRefused(store, saying: ["cannot read the client key file \(later.path)", "No such file or directory"])
        try FileManager.default.copyItem(at: Fixtures.url("tls/client-key.pem"), to: later)
        #expect(eventually(timeout: .seconds(20)) { store.synchronize(timeout: 2) })
        #expect(try rawEtcdValue(node.plainEndpoints[0], namespace, "kept") == "\"local\"")
    }

    @Test func tlsToAPlainMemberAndPlainHTTPToATLSMemberAreClearErrorsWithinTheTimeout() throws {
        let plain = try EtcdCluster(members: 1)
        let tlsToPlain = try #require(URL(string: "https://127.0.0.1:\(plain.endpoints[0].port ?? 0)"))
        let store = try machine([tlsToPlain], freshNamespace(), "p", tls: EtcdTLS(caFile: Self.ca))
        expectRefused(store, saying: [tlsToPlain.absoluteString, "TLS handshake failed"])

        let secure = try EtcdCluster(members: 1, tls: Self.server)
        let plainToTLS = try #require(URL(string: "http://127.0.0.1:\(secure.endpoints[0].port ?? 0)"))
        let other = try machine([plainToTLS], freshNamespace(), "t", tls: EtcdTLS(caFile: Self.ca))
        // Not a definite "no" (a closed connection may be a member restarting): within the timeout.
        expectRefused(other, saying: [plainToTLS.absoluteString, "its endpoint must be https://"], definite: false)
    }

    @Test func aWrongPasswordOverTLSIsEtcdsClearErrorAndTheRightOneSyncs() throws {
        let node = try EtcdCluster(members: 1, tls: Self.server)
        try enableAuthentication(node.plainEndpoints[0])
        let namespace = freshNamespace()
        let wrong = try machine(
            node.endpoints, namespace, "w", tls: EtcdTLS(caFile: Self.ca), user: "root", password: "guess")
        expectRefused(
            wrong,
            saying: [
                "etcd refused the login of user 'root'", node.endpoints[0].absoluteString, "check the user and password"
            ], definite: false)
        let right = try machine(
            node.endpoints, namespace, "r", tls: EtcdTLS(caFile: Self.ca), user: "root", password: "secret")
        right.set(2, forKey: "a")
        #expect(right.synchronize())
    }

    @Test func aHungTLSMemberTimesOutOnANewAndOnAKeptConnection() throws {
        let node = try EtcdCluster(members: 1, tls: Self.server)
        let transport = EtcdTransport(EtcdTLS(caFile: Self.ca))
        let pool = EtcdConnectionPool()
        let status = node.endpoints[0].appendingPathComponent("/v3/maintenance/status")
        func post() -> EtcdHTTP.Outcome {
            EtcdHTTP.post(
                url: status, body: Data("{}".utf8), headers: [:], timeout: 0.5, transport: transport, pool: pool)
        }
        guard case .answer(200, _) = post() else { Issue.record("no status answer over TLS"); return }
        node.pause(0)
        defer { node.pause(0, resume: true) }
        // The stopped member never answers: each request returns only because its timeout ended it.
        for attempt in ["kept connection", "new connection"] {  // the first reuses the kept one, which then is closed
            let outcome = post()
            guard case .unreachable(let why, let refused, let rejected) = outcome else {
                Issue.record("\(attempt): \(outcome)"); continue
            }
            #expect(why.contains("no answer within the timeout"), "\(attempt): \(why)")
            #expect(!refused && !rejected, "a timeout is not a definite no")
        }
        #expect(pool.reuses.withLock { $0 } == 1)
    }

    @Test func aHungWatchedTLSMemberIsFoundByProbingAndTheWatchMovesOn() throws {
        let cluster = try EtcdCluster(members: 3, tls: Self.server)
        let namespace = freshNamespace()
        let watcher = try machine(cluster.endpoints, namespace, "watcher", tls: EtcdTLS(caFile: Self.ca))
        let writer = try machine(
            [cluster.endpoints[1], cluster.endpoints[2]], namespace, "writer", tls: EtcdTLS(caFile: Self.ca))
        expectHungWatchedMemberLeftBehind(
            cluster, watcher: watcher, writer: writer, label: "cloud hung-member gap over TLS")
    }

    /// 40 writes, one at a time, from one store to another over TLS and, on the same member's plain port,
    /// without: every value arrives, in order, both ways. Prints the latencies side by side.
    @Test func propagationOverTLSDeliversEveryValueInOrderBesideThePlainPort() throws {
        let node = try EtcdCluster(members: 1, tls: Self.server)
        var medians: [String: Duration] = [:]
        for (mode, endpoint) in [("TLS", node.endpoints[0]), ("plain", node.plainEndpoints[0])] {
            let namespace = freshNamespace()
            let writer = try machine([endpoint], namespace, "writer-\(mode)", tls: EtcdTLS(caFile: Self.ca))
            let observer = try machine([endpoint], namespace, "observer-\(mode)", tls: EtcdTLS(caFile: Self.ca))
            #expect(writer.synchronize() && observer.synchronize())
            let arrivals = Locked<[(value: Int64, at: ContinuousClock.Instant)]>([])
            let observation = observer.observe(keys: ["v"]) { _ in
                let value = observer.longLong(forKey: "v")
                arrivals.withLock { $0.append((value, .now)) }
            }
            defer { observation.cancel() }
            var latencies: [Duration] = []
            for value in Int64(1)...40 {
                let written = ContinuousClock.now
                writer.set(value, forKey: "v")
                #expect(
                    eventually(timeout: .seconds(5)) { arrivals.withLock { $0.last?.value == value } },
                    "\(mode): \(value) did not arrive")
                if let arrived = arrivals.withLock({ $0.last(where: { $0.value == value })?.at }) {
                    latencies.append(arrived - written)
                }
            }
            #expect(arrivals.withLock { $0.map(\.value) } == Array(1...40), "\(mode): not every value, or not in order")
            latencies.sort()
            guard !latencies.isEmpty else { continue }
            medians[mode] = latencies[latencies.count / 2]
            print(
                "cloud propagation over \(mode): p50 \(latencies[latencies.count / 2]), p90 \(latencies[latencies.count * 9 / 10]), max \(latencies.last!) (40 writes, store → store, one member)"
            )
        }
        #expect(medians.count == 2)
    }

    @Test func withoutTheTLSLibraryHTTPSFailsNamingTheLibraryAndPackageAndHTTPStillWorks() throws {
        let missing = TLSLibrary.load(ssl: "libssl-missing-for-test.so.3")
        guard case .failure(let why) = missing else { Issue.record("a library that does not exist was loaded"); return }
        #expect(why.text.contains("libssl-missing-for-test.so.3") && why.text.contains("libssl3"), "\(why.text)")

        let plain = try EtcdCluster.sharedNode()
        let transport = EtcdTransport(EtcdTLS(), library: missing)
        let outcome = EtcdHTTP.post(
            url: URL(string: "https://127.0.0.1:\(plain.endpoints[0].port ?? 0)/v3/maintenance/status")!,
            body: Data("{}".utf8),
            headers: [:], timeout: 2, transport: transport)
        guard case .unreachable(let text, _, let rejected) = outcome else {
            Issue.record("https without the library: \(outcome)"); return
        }
        #expect(text.contains("libssl3") && text.contains("127.0.0.1"), "\(text)")
        #expect(rejected, "a missing TLS library is a definite no")
        #expect(
            try synchronousPost(plain.endpoints[0], "/v3/maintenance/status", "{}", transport: transport)?.contains(
                "\"leader\"") == true)
    }
}

/// The TLS forms of the configuration (no server needed).
@Suite struct EtcdTLSConfigurationTests {
    let directory = TemporaryDirectory()

    @Test func theTLSAddressFormsGiveHTTPSEndpointsAndTheEnvironmentGivesTheFiles() throws {
        let environment = [
            "OBSERVABLE_DEFAULTS_CLOUD_CA": "/etc/fleet/ca.pem", "OBSERVABLE_DEFAULTS_CLOUD_CERT": "/etc/fleet/me.pem",
            "OBSERVABLE_DEFAULTS_CLOUD_KEY": "/etc/fleet/me-key.pem"
        ]
        let secure = try EtcdConfiguration(
            url: "etcds://ops:pw@10.0.0.1:2379,node2:2379/fleet", environment: environment)
        #expect(secure.endpoints.map(\.absoluteString) == ["https://10.0.0.1:2379", "https://node2:2379"])
        #expect(secure.user == "ops" && secure.password == "pw" && secure.namespace == "fleet")
        #expect(
            secure.tls
                == EtcdTLS(
                    caFile: URL(fileURLWithPath: "/etc/fleet/ca.pem"),
                    clientCertificateFile: URL(fileURLWithPath: "/etc/fleet/me.pem"),
                    clientKeyFile: URL(fileURLWithPath: "/etc/fleet/me-key.pem")))
        #expect(
            try EtcdConfiguration(url: "https://10.0.0.1:2379/fleet", environment: [:]).endpoints.map(\.absoluteString)
                == ["https://10.0.0.1:2379"])
        #expect(try EtcdConfiguration(url: "https://10.0.0.1:2379/fleet", environment: [:]).tls == EtcdTLS())
        #expect(
            try EtcdConfiguration(url: "http://10.0.0.1:2379/fleet", environment: environment).endpoints.map(
                \.absoluteString) == ["http://10.0.0.1:2379"])
        #expect(EtcdTLS(environment: ["OBSERVABLE_DEFAULTS_CLOUD_CA": ""]) == EtcdTLS())
        #expect(throws: DefaultsError.self) {
            try EtcdConfiguration(url: "tls://10.0.0.1:2379/fleet", environment: [:])
        }
    }

    @Test func theDefaultStoreTakesTheTLSAddressAndFilesFromTheEnvironment() {
        let cloud = CloudKeyValueStore.fromEnvironment([
            "OBSERVABLE_DEFAULTS_CLOUD": "etcds://127.0.0.1:1/fleet",
            "OBSERVABLE_DEFAULTS_CLOUD_CA": "/etc/fleet/ca.pem",
            "OBSERVABLE_DEFAULTS_STATE_DIRECTORY": directory.url.path
        ])
        #expect(cloud.mode == .etcd)
        #expect(cloud.configuration?.endpoints.map(\.absoluteString) == ["https://127.0.0.1:1"])
        #expect(cloud.configuration?.tls.caFile?.path == "/etc/fleet/ca.pem")
    }

    @Test func httpAndHTTPSOfTheSameMembersShareTheLocalCopy() {
        let plain = CloudStateDirectory.localCopyName(
            endpoints: [URL(string: "http://10.0.0.1:2379")!, URL(string: "http://b:2379")!], namespace: "fleet")
        let secure = CloudStateDirectory.localCopyName(
            endpoints: [URL(string: "https://b:2379")!, URL(string: "https://10.0.0.1:2379")!], namespace: "fleet")
        #expect(plain == secure)
        #expect(
            secure
                != CloudStateDirectory.localCopyName(
                    endpoints: [URL(string: "https://10.0.0.1:2380")!, URL(string: "https://b:2379")!],
                    namespace: "fleet"))
    }
}

/// Writing through TLS to a member that died: an error, not SIGPIPE (OpenSSL sends without `MSG_NOSIGNAL`).
@Suite(.serialized, EtcdCluster.required) struct EtcdTLSBrokenPipeTests {
    @Test func writingToAKilledTLSMemberIsAnErrorAndTheProcessLives() throws {
        let node = try EtcdCluster(members: 1, tls: EtcdTLSTests.server)
        let url = node.endpoints[0].appendingPathComponent("/v3/kv/put")
        var connection = try EtcdHTTP.Connection.open(
            url: url, timeout: 2, transport: EtcdTransport(EtcdTLS(caFile: EtcdTLSTests.ca))
        ).get()
        defer { connection.close() }
        node.kill(0)
        let large = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        var failure: EtcdHTTP.Failure?
        // The first writes may still land in the socket buffer, the first failure may be a reset: writing
        // on after it is what raises SIGPIPE.
        for _ in 0..<20 {
            do throws(EtcdHTTP.Failure) { try connection.send(large) } catch { failure = failure ?? error }
        }
        let text = try #require(failure?.text)
        #expect(text.hasPrefix("sending the request failed:"), "\(text)")
    }
}
