import EtcdLauncher
import Foundation
import ObservableDefaults
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `defaults cloud …` against a real etcd node: every command is its own process, as two machines' shells.
@Suite(.serialized, ToolEtcd.required) struct CloudToolTests {
    /// The children's `TMPDIR`, where the tool keeps its store's local copy while it runs.
    private let temporary = TemporaryDirectory()

    /// Runs `defaults cloud ARGUMENTS` with `OBSERVABLE_DEFAULTS_CLOUD=address`.
    private func cloud(_ address: String, _ arguments: String...) throws -> RunResult {
        try Built.run(
            "defaults", ["cloud"] + arguments, directory: nil,
            environment: ["OBSERVABLE_DEFAULTS_CLOUD": address, "TMPDIR": temporary.path])
    }

    /// What the tool left in its `TMPDIR` (nothing, when it cleans up).
    private func leftovers() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
    }

    @Test func writeInOneProcessReadInAnother() throws {
        let address = try ToolEtcd.freshAddress()
        let write = try cloud(address, "write", "workers", "-int", "8")
        #expect(write.status == 0, "\(write)")
        let list = try cloud(address, "write", "hosts", "-array", "a", "b")
        #expect(list.status == 0, "\(list)")
        let added = try cloud(address, "write", "hosts", "-array-add", "c")
        #expect(added.status == 0, "\(added)")

        let one = try cloud(address, "read", "workers")
        #expect(one.status == 0 && one.stdout == "8\n", "\(one)")
        let all = try cloud(address, "read", "--json")
        #expect(all.status == 0, "\(all)")
        let parsed = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any]
        #expect(parsed?["workers"] as? Int == 8, "\(all)")
        #expect(parsed?["hosts"] as? [String] == ["a", "b", "c"], "\(all)")

        let delete = try cloud(address, "delete", "workers")
        #expect(delete.status == 0, "\(delete)")
        let gone = try cloud(address, "read", "workers")
        #expect(gone.status == 1 && gone.stderr.contains("Key 'workers' does not exist in the cloud"), "\(gone)")
        #expect(leftovers().isEmpty, "the tool left \(leftovers()) behind")
    }

    @Test func watchInAChildProcessSeesAWriteFromAnotherProcess() throws {
        let address = try ToolEtcd.freshAddress()
        // --cloud instead of the environment variable: both name the cluster.
        let watch = try StreamingProcess(
            "defaults", ["cloud", "watch", "theme", "--json", "--cloud", address], directory: nil,
            environment: ["TMPDIR": temporary.path])
        #expect(watch.waitUntil { $0.stderr.contains("Watching the cloud") }, "watch did not start: \(watch.stderr)")

        #expect(try cloud(address, "write", "other", "x").status == 0)
        #expect(try cloud(address, "write", "theme", "dark").status == 0)
        #expect(
            watch.waitForLine(containing: "\"key\":\"theme\""), "no line for the write: \(watch.stdout) \(watch.stderr)"
        )
        #expect(try cloud(address, "delete", "theme").status == 0)
        #expect(watch.waitForLine(containing: "\"removed\":true"), "no line for the delete: \(watch.stdout)")

        #expect(watch.stop(signal: SIGINT) == 0)
        let events = try watch.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        // Only the watched key, each change once, with its reason.
        #expect(events.count == 2, "\(watch.stdout)")
        guard events.count == 2 else { return }
        #expect(events[0]["key"] as? String == "theme" && events[0]["value"] as? String == "dark")
        #expect(events[0]["reason"] as? String == "serverChange")
        #expect(events[1]["removed"] as? Bool == true)
        #expect(leftovers().isEmpty, "the tool left \(leftovers()) behind")
    }

    @Test func unreachableEndpointFailsWithTheReason() throws {
        let address = "etcd://127.0.0.1:\(freeLoopbackPort())/nobody"
        // A refused connection is a definite answer, which ends the library's synchronize() before its timeout
        // (CloudLocalCopySaverTests.synchronizeGivesUpAtOnceWhenEveryEndpointRefusesConnections); here, that
        // the tool says why.
        let write = try cloud(address, "write", "k", "v")
        #expect(write.status == 1, "\(write)")
        #expect(
            write.stderr.contains("cannot sync with the cloud (namespace 'nobody' at http://127.0.0.1:"), "\(write)")
        #expect(write.stderr.contains("cannot be reached"), "\(write)")
        let read = try cloud(address, "read")
        #expect(read.status == 1 && read.stderr.contains("nothing was read"), "\(read)")
    }

    @Test func writePastTheLimitsIsRefused() throws {
        let address = try ToolEtcd.freshAddress()
        let key = String(repeating: "k", count: 65)
        let write = try cloud(address, "write", key, "v")
        #expect(write.status == 1, "\(write)")
        #expect(write.stderr.contains("refused key '\(key)', nothing was written"), "\(write)")
        #expect(write.stderr.contains("more than the limit of 64"), "\(write)")
        let read = try cloud(address, "read", "--json")
        #expect(read.status == 0 && read.stdout == "{}\n", "\(read)")
    }
}

/// The cloud verb's command-line errors need no etcd.
@Suite struct CloudToolUsageTests {
    @Test func noCloudConfigured() throws {
        let result = try Built.run(
            "defaults", ["cloud", "read"], directory: nil, environment: ["OBSERVABLE_DEFAULTS_CLOUD": ""])
        #expect(result.status == 1, "\(result)")
        #expect(
            result.stderr.contains(
                "no cloud is configured: pass --cloud etcd://host:2379/namespace or set OBSERVABLE_DEFAULTS_CLOUD"),
            "\(result)")
    }

    @Test func badAddressAndUnknownCloudVerb() throws {
        let bad = try Built.run("defaults", ["cloud", "read", "--cloud", "ftp://x:1/n"], directory: nil)
        #expect(bad.status == 1 && bad.stderr.contains("is not a cloud address"), "\(bad)")
        let unknown = try Built.run("defaults", ["cloud", "list", "--cloud", "etcd://127.0.0.1:1/n"], directory: nil)
        #expect(unknown.status == 2 && unknown.stderr.contains("unknown cloud verb 'list'"), "\(unknown)")
    }

    /// An address's password is never printed: not for an address that does not parse (here without a
    /// port), nor for a cluster that does not answer, given with `--cloud` or in the environment.
    @Test func thePasswordOfAnAddressIsNeverPrinted() throws {
        for address in ["etcd://root:SECRET@127.0.0.1/ns", "etcd://root:SECRET@127.0.0.1:1/ns"] {
            let given = try Built.run(
                "defaults", ["cloud", "read", "--cloud", address], directory: nil,
                environment: ["OBSERVABLE_DEFAULTS_CLOUD": ""])
            let exported = try Built.run(
                "defaults", ["cloud", "read"], directory: nil, environment: ["OBSERVABLE_DEFAULTS_CLOUD": address])
            for result in [given, exported] {
                #expect(result.status == 1, "\(result)")
                #expect(!result.stderr.contains("SECRET") && !result.stdout.contains("SECRET"), "\(result)")
                #expect(result.stderr.contains("127.0.0.1"), "the error no longer names the address: \(result)")
            }
        }
        let bad = try Built.run(
            "defaults", ["cloud", "read", "--cloud", "etcd://root:SECRET@127.0.0.1/ns"], directory: nil)
        #expect(bad.stderr.contains("'etcd://root:***@127.0.0.1/ns' is not a cloud address"), "\(bad)")
    }
}

/// A cluster with authentication: a wrong password is a clear error, the right one works.
@Suite(.serialized, ToolEtcd.required) struct CloudToolAuthenticationTests {
    @Test func wrongPasswordFailsWithTheReasonAndTheRightOneWrites() throws {
        let node = try EtcdNode()
        defer { node.stop() }
        // User root (password "secret") with the root role, then authentication on.
        for (path, body) in [
            ("/v3/auth/user/add", #"{"name":"root","password":"secret"}"#), ("/v3/auth/role/add", #"{"name":"root"}"#),
            ("/v3/auth/user/grant", #"{"user":"root","role":"root"}"#), ("/v3/auth/enable", "{}")
        ] {
            #expect(etcdPost(node.endpoint, path, body) != nil, "\(path) failed")
        }
        let hostPort = "\(node.endpoint.host!):\(node.endpoint.port!)"
        let wrong = try Built.run(
            "defaults", ["cloud", "write", "k", "v", "--cloud", "etcd://root:guess@\(hostPort)/auth"], directory: nil)
        #expect(wrong.status == 1, "\(wrong)")
        #expect(!wrong.stderr.contains("guess"), "the password was printed: \(wrong)")
        #expect(wrong.stderr.contains("cannot sync with the cloud (namespace 'auth'"), "\(wrong)")
        #expect(wrong.stderr.contains("etcd refused the login of user 'root'"), "\(wrong)")

        let right = try Built.run(
            "defaults", ["cloud", "write", "k", "v", "--cloud", "etcd://root:secret@\(hostPort)/auth"], directory: nil)
        #expect(right.status == 0, "\(right)")
        let read = try Built.run(
            "defaults", ["cloud", "read", "k", "--cloud", "etcd://root:secret@\(hostPort)/auth"], directory: nil)
        #expect(read.status == 0 && read.stdout == "v\n", "\(read)")
    }
}
