import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// A cloud address's password appears nowhere but where the user put it: not in a parse error, not on a
/// store's error channel, not in a configuration's description, debug description or reflection, not in an
/// error naming an endpoint.
@Suite struct CloudCredentialsTests {
    let directory = TemporaryDirectory()

    /// Addresses that do not parse, each holding a password; `secrets` are the parts that must not appear.
    static let badAddresses: [(address: String, secrets: [String])] = [
        ("etcd://root:SECRET@127.0.0.1/ns", ["SECRET"]),  // no port
        ("etcd://root:SECRET@127.0.0.1", ["SECRET"]),  // no namespace
        ("etcd://root:SECRET@127.0.0.1:2379/", ["SECRET"]),  // empty namespace
        ("etcd://root:SECRET@/ns", ["SECRET"]),  // no host
        ("etcd://root:SECRET@127.0.0.1:2379,other/ns", ["SECRET"]),  // a second host without port
        ("ftp://root:SECRET@127.0.0.1:2379/ns", ["SECRET"]),  // unknown scheme
        ("root:SECRET@127.0.0.1:2379/ns", ["SECRET"]),  // no scheme at all
        ("etcd://SECRET@127.0.0.1/ns", ["SECRET"]),  // a password-like user alone
        ("etcd://root:SE@CRET@127.0.0.1/ns", ["SE@CRET", "CRET"]),  // '@' in the password
        ("etcd://root:p4ss/w0rd@127.0.0.1:2379/ns", ["p4ss", "w0rd"])  // an unencoded '/' in the password
    ]

    @Test func parseErrorsShowTheAddressWithoutItsPassword() {
        for (address, secrets) in Self.badAddresses {
            do {
                _ = try EtcdConfiguration(url: address, environment: [:])
                Issue.record("\(address) parsed")
            } catch {
                for secret in secrets {
                    #expect(!error.description.contains(secret), "\(error.description)")
                    #expect(!error.message.contains(secret), "\(error.message)")
                }
                #expect(error.message.contains("is not a cloud address"), "\(error.message)")
            }
        }
        // The address is still named, with the user and without the password.
        let error = #expect(throws: DefaultsError.self) {
            try EtcdConfiguration(url: "etcd://root:SECRET@127.0.0.1/ns", environment: [:])
        }
        #expect(
            error?.message.hasPrefix(
                "'etcd://root:***@127.0.0.1/ns' is not a cloud address: '127.0.0.1' is not host:port") == true,
            "\(String(describing: error))")
    }

    @Test func theEnvironmentVariablesErrorOnTheStoresChannelHasNoPassword() {
        let store = CloudKeyValueStore.fromEnvironment([
            "OBSERVABLE_DEFAULTS_CLOUD": "etcd://root:SECRET@127.0.0.1/ns",
            "OBSERVABLE_DEFAULTS_STATE_DIRECTORY": directory.url.path
        ])
        #expect(store.mode == .localOnly)
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(store.synchronize())  // the errors are delivered by then
        let current = store.currentErrors.map(\.description)
        #expect(
            current.contains {
                $0.contains("OBSERVABLE_DEFAULTS_CLOUD: 'etcd://root:***@127.0.0.1/ns' is not a cloud address")
            }, "\(current)")
        #expect(!current.contains { $0.contains("SECRET") }, "\(current)")
        #expect(errors.waitFor("OBSERVABLE_DEFAULTS_CLOUD"))
        #expect(!errors.errors.contains { $0.description.contains("SECRET") }, "\(errors.errors)")
    }

    @Test func aConfigurationsDescriptionsAndReflectionHideThePassword() throws {
        let configuration = try EtcdConfiguration(
            url: "etcd://root:SECRET@10.0.0.1:2379,10.0.0.2:2379/fleet", environment: [:])
        #expect(configuration.password == "SECRET")
        var dumped = ""
        dump(configuration, to: &dumped)
        var dumpedOptional = ""
        dump(Optional(configuration), to: &dumpedOptional)
        let texts = [
            String(describing: configuration), String(reflecting: configuration), "\(configuration)", dumped,
            dumpedOptional,
            String(describing: Optional(configuration)), String(describing: [configuration]),
            Mirror(reflecting: configuration).children.map { "\($0.label ?? ""): \($0.value)" }.joined(separator: "\n")
        ]
        for text in texts {
            #expect(!text.contains("SECRET"), "\(text)")
            #expect(text.contains("10.0.0.2"), "the text lost the endpoints: \(text)")
        }
        #expect(String(describing: configuration) == "etcd://root:***@10.0.0.1:2379,10.0.0.2:2379/fleet")
        #expect(
            String(reflecting: configuration).contains(#"password: Optional("***")"#),
            "\(String(reflecting: configuration))")
        #expect(dumped.contains("root") && dumped.contains("***"), "\(dumped)")
        // Without a password there is nothing to hide, and the description says so.
        let open = try EtcdConfiguration(url: "etcds://10.0.0.1:2379/fleet", environment: [:])
        #expect(String(describing: open) == "etcds://10.0.0.1:2379/fleet")
        #expect(String(reflecting: open).contains("password: nil"), "\(String(reflecting: open))")
    }

    @Test func aStoresDescriptionAndReflectionHideThePassword() throws {
        let store = try CloudKeyValueStore(
            etcd: EtcdConfiguration(
                endpoints: [URL(string: "http://127.0.0.1:1")!], namespace: "n", user: "root", password: "SECRET",
                stateDirectory: directory.url, requestTimeout: 0.5))
        var dumped = ""
        dump(store, to: &dumped, maxDepth: 4)
        for text in [dumped, String(describing: store.configuration), String(reflecting: store)] {
            #expect(!text.contains("SECRET"), "\(text)")
        }
    }

    /// Credentials written into an endpoint URL are taken out of it: every error naming the endpoint would
    /// show them otherwise. They become the user and password (which the URL form never sent to etcd).
    @Test func credentialsInAnEndpointURLBecomeTheUserAndNeverShow() throws {
        var configuration = EtcdConfiguration(
            endpoints: [URL(string: "http://root:SECRET@127.0.0.1:1")!], namespace: "n", stateDirectory: directory.url,
            requestTimeout: 0.5)
        #expect(configuration.endpoints.map(\.absoluteString) == ["http://127.0.0.1:1"])
        #expect(configuration.user == "root" && configuration.password == "SECRET")
        configuration.endpoints.append(URL(string: "http://other:OTHER@127.0.0.1:2")!)
        #expect(configuration.endpoints.map(\.absoluteString) == ["http://127.0.0.1:1", "http://127.0.0.1:2"])
        #expect(configuration.user == "root" && configuration.password == "SECRET", "a user set already is kept")

        let store = try CloudKeyValueStore(etcd: configuration)
        let errors = ErrorRecorder()
        let observation = store.observeErrors { errors.record($0) }
        defer { observation.cancel() }
        #expect(!store.synchronize(timeout: 2))
        #expect(errors.waitFor("127.0.0.1:1"), "\(errors.errors)")
        let texts = errors.errors.map(\.description) + store.currentErrors.map(\.description)
        #expect(!texts.contains { $0.contains("SECRET") || $0.contains("OTHER") }, "\(texts)")
    }

    @Test func redactionKeepsTheUserAndHidesEveryFormOfPassword() {
        #expect(
            EtcdConfiguration.redactingCredentials(in: "etcd://root:SECRET@127.0.0.1/ns")
                == "etcd://root:***@127.0.0.1/ns")
        #expect(EtcdConfiguration.redactingCredentials(in: "etcd://127.0.0.1:2379/ns") == "etcd://127.0.0.1:2379/ns")
        #expect(EtcdConfiguration.redactingCredentials(in: "etcd://SECRET@h/ns") == "etcd://***@h/ns")
        #expect(EtcdConfiguration.redactingCredentials(in: "etcd://root:a@b@h/ns") == "etcd://root:***@h/ns")
        #expect(EtcdConfiguration.redactingCredentials(in: "etcd://root:a/b@h:1/ns") == "etcd://root:***@h:1/ns")
        #expect(EtcdConfiguration.redactingCredentials(in: "root:SECRET@h:1/ns") == "root:***@h:1/ns")
    }
}
