import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A state directory another user could change (writable by group or others, owned by another user, a
/// symlink) is not trusted: the store neither reads nor writes its local copy there, keeps its values in
/// memory only and says why on its error channel (`CloudStateDirectory`).
@Suite struct CloudStateDirectoryTrustTests {
    let directory = TemporaryDirectory()

    /// A state directory whose `cloud/` holds a local-only copy with `planted` = "by another user", then
    /// set to `mode` (and owned by `owner`, when given). Returns the state directory.
    private func plantedState(_ name: String, mode: mode_t = 0o700, stateMode: mode_t = 0o700, owner: uid_t? = nil)
        throws -> URL
    {
        let state = directory.file(name)
        let cloud = state.appendingPathComponent("cloud")
        try FileManager.default.createDirectory(at: cloud, withIntermediateDirectories: true)
        let copy = CloudLocalCopy(fileURL: CloudKeyValueStore.localOnlyCopyURL(in: state))
        try copy.save(cloudState(["planted": .string("by another user")]))
        copy.stopWriting()
        #expect(chmod(cloud.path, mode) == 0 && chmod(state.path, stateMode) == 0)
        if let owner { #expect(chown(cloud.path, owner, gid_t(owner)) == 0, "chown: errno \(errno)") }
        return state
    }

    /// The files in `path` with their contents.
    private func snapshot(_ path: String) -> [String: Data] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return Dictionary(
            uniqueKeysWithValues: names.map { ($0, FileManager.default.contents(atPath: path + "/" + $0) ?? Data()) })
    }

    /// Opens a local-only store on `state` and checks that it ignored the planted copy, wrote nothing to
    /// the directory and reported why with `expected` in the message.
    private func expectUntrusted(_ state: URL, _ expected: [String], sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let cloud = state.appendingPathComponent("cloud").resolvingSymlinksInPath().path
        let before = snapshot(cloud)
        #expect(!before.isEmpty, "nothing was planted", sourceLocation: sourceLocation)
        do {
            let store = CloudKeyValueStore.localOnly(directory: state)
            #expect(
                store.string(forKey: "planted") == nil, "the planted copy was loaded", sourceLocation: sourceLocation)
            #expect(store.localCopyURL == nil, sourceLocation: sourceLocation)
            store.set("mine", forKey: "own")
            #expect(store.synchronize(), sourceLocation: sourceLocation)
            #expect(
                store.string(forKey: "own") == "mine", "the store still works, in memory",
                sourceLocation: sourceLocation)
            let problem = store.currentErrors.first { $0.message.contains("local copy is not read or written there") }
            #expect(problem != nil, "\(store.currentErrors)", sourceLocation: sourceLocation)
            for text in expected {
                #expect(
                    problem?.message.contains(text) == true, "'\(text)' missing: \(String(describing: problem))",
                    sourceLocation: sourceLocation)
            }
            #expect(
                store.currentErrors.contains { $0.message.contains("values are kept in memory only and never synced") },
                sourceLocation: sourceLocation)
        }
        #expect(snapshot(cloud) == before, "the store wrote to the untrusted directory", sourceLocation: sourceLocation)
    }

    @Test func aWorldWritableCloudDirectoryIsNotReadOrWritten() throws {
        let state = try plantedState("open", mode: 0o777)
        let cloud = state.appendingPathComponent("cloud").path
        try expectUntrusted(
            state,
            [
                "the cloud state directory \(cloud) is writable by other users (mode 0777)",
                "make it private: chmod 700 \(cloud)"
            ])
    }

    @Test func aGroupWritableCloudDirectoryIsNotReadOrWritten() throws {
        let state = try plantedState("group", mode: 0o770)
        let cloud = state.appendingPathComponent("cloud").path
        try expectUntrusted(state, ["\(cloud) is writable by its group (mode 0770)", "chmod 700 \(cloud)"])
    }

    @Test func aSymlinkedCloudDirectoryIsNotFollowed() throws {
        let elsewhere = try plantedState("elsewhere")
        let state = directory.file("linked")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: state.appendingPathComponent("cloud").path,
            withDestinationPath: elsewhere.appendingPathComponent("cloud").path)
        try expectUntrusted(
            state, ["\(state.path)/cloud is a symlink (to \(elsewhere.path)/cloud), not a directory", "remove the link"]
        )
    }

    @Test(
        .enabled(
            if: CurrentProcess.isRoot,
            "only root can give a directory to another user (chown); run the tests as root to cover this case"))
    func aCloudDirectoryOwnedByAnotherUserIsNotReadOrWritten() throws {
        let state = try plantedState("foreign", owner: 65534)
        try expectUntrusted(state, ["\(state.path)/cloud is owned by uid 65534, not by this process's user (uid 0)"])
    }

    @Test func aStateDirectoryOthersCanWriteIsNotTrustedUnlessSticky() throws {
        let open = try plantedState("open-state", stateMode: 0o777)
        try expectUntrusted(
            open,
            [
                "the state directory \(open.path) holding \(open.path)/cloud is writable by other users and not sticky (mode 0777)"
            ])
        let group = try plantedState("group-state", stateMode: 0o770)
        try expectUntrusted(
            group,
            [
                "the state directory \(group.path) holding \(group.path)/cloud is writable by its group and not sticky (mode 0770)"
            ])
        // Sticky, like /tmp: others can neither rename nor remove our private cloud/ in it.
        let sticky = try plantedState("sticky-state", stateMode: 0o1777)
        let store = CloudKeyValueStore.localOnly(directory: sticky)
        #expect(store.string(forKey: "planted") == "by another user", "a private cloud/ in a sticky directory is used")
        #expect(
            !store.currentErrors.contains { $0.message.contains("not read or written there") }, "\(store.currentErrors)"
        )
    }

    @Test(
        .enabled(
            if: CurrentProcess.isRoot,
            "only root can give a directory to another user (chown); run the tests as root to cover this case"))
    func aStateDirectoryOwnedByAnotherUserIsNotTrusted() throws {
        let state = try plantedState("foreign-state")
        #expect(chown(state.path, 65534, 65534) == 0)
        try expectUntrusted(
            state,
            [
                "the state directory \(state.path) holding \(state.path)/cloud is owned by uid 65534, neither this process's user (uid 0) nor root"
            ])
    }

    @Test func aFreshStateDirectoryIsCreatedPrivateAtStartAndUsed() throws {
        let state = directory.file("fresh").appendingPathComponent("deeper/state")
        do {
            let store = CloudKeyValueStore.localOnly(directory: state)
            #expect(store.localCopyURL != nil)
            #expect(
                !store.currentErrors.contains { $0.message.contains("not read or written there") },
                "\(store.currentErrors)")
            for path in [directory.file("fresh").path, state.path, state.appendingPathComponent("cloud").path] {
                let status = try FileStatus(linkAt: path)
                #expect(
                    status.kind == .directory && status.permissions == 0o700,
                    "\(path): mode \(String(status.permissions, radix: 8))")
                #expect(status.owner == CurrentProcess.effectiveUser)
            }
            store.set("kept", forKey: "k")
            #expect(store.synchronize())
        }
        #expect(CloudKeyValueStore.localOnly(directory: state).string(forKey: "k") == "kept")
    }

    /// The check is repeated where a save creates the directory again (it was removed meanwhile): a
    /// directory others can write is not where the copy goes.
    @Test func aSaveDoesNotCreateTheCopyUnderADirectoryOthersCanWrite() throws {
        let state = directory.file("opened-later")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        #expect(chmod(state.path, 0o777) == 0)
        let copy = CloudLocalCopy(fileURL: state.appendingPathComponent("cloud/copy.json"))
        let error = #expect(throws: DefaultsError.self) { try copy.save(cloudState(["k": .integer(1)])) }
        #expect(
            error?.message.contains("writable by other users and not sticky (mode 0777)") == true,
            "\(String(describing: error))")
        #expect(snapshot(state.appendingPathComponent("cloud").path).isEmpty)
    }
}

/// An etcd store in an untrusted state directory: a copy planted there (a value and an unsent write) is
/// neither loaded nor uploaded with the store's credentials, while the store still syncs in memory.
@Suite(.serialized, EtcdCluster.required) struct EtcdStateDirectoryTrustTests {
    let directory = TemporaryDirectory()

    @Test func anUnsentWritePlantedInAWorldWritableDirectoryIsNeitherLoadedNorUploaded() throws {
        let etcd = try EtcdCluster.sharedNode()
        let endpoint = etcd.plainEndpoints[0]
        let namespace = freshNamespace()
        let state = directory.file("machine")
        let fileURL = try releasedMachineCopy(etcd.plainEndpoints, namespace: namespace, state: state)
        // Another user, able to write the directory, plants a value and an unsent write in the copy.
        let copy = CloudLocalCopy(fileURL: fileURL)
        var planted = try #require(try copy.load())
        planted.setValue(.string("planted"), forKey: "planted")
        planted.pending["planted"] = PendingWrite(
            value: .string("planted"), baseRevision: 0, generation: planted.nextGeneration)
        planted.nextGeneration += 1
        try copy.save(planted)
        copy.stopWriting()
        let cloud = fileURL.deletingLastPathComponent().path
        #expect(chmod(cloud, 0o777) == 0)

        do {
            let store = try cloudMachine(etcd.plainEndpoints, namespace: namespace, state: state)
            #expect(store.localCopyURL == nil)
            #expect(store.string(forKey: "planted") == nil)
            #expect(store.synchronize())
            #expect(store.string(forKey: "kept") == "server", "the store syncs from the server, in memory")
            store.set("online", forKey: "written")
            #expect(store.synchronize())
            #expect(try rawEtcdValue(endpoint, namespace, "written") == "\"online\"")
            #expect(
                store.currentErrors.contains { $0.message.contains("\(cloud) is writable by other users (mode 0777)") },
                "\(store.currentErrors)")
        }
        #expect(try rawEtcdValue(endpoint, namespace, "planted") == nil, "the planted write was uploaded")
        #expect(CloudLocalCopy(fileURL: fileURL).currentState()?.pending["planted"] != nil, "the copy was changed")

        // The same copy in a private directory is this user's own: loaded and uploaded (the plant was real).
        #expect(chmod(cloud, 0o700) == 0)
        let store = try cloudMachine(etcd.plainEndpoints, namespace: namespace, state: state)
        #expect(store.string(forKey: "planted") == "planted")
        #expect(store.synchronize())
        #expect(try rawEtcdValue(endpoint, namespace, "planted") == "\"planted\"")
    }
}
