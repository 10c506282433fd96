import Foundation

/// Starts the members of a new etcd cluster on free loopback ports, surviving ports taken meanwhile.
///
/// A port picked as free (``freeLoopbackPort()``) is released before etcd binds it, so another process can
/// take it first; etcd then exits with "address already in use". The launcher notices that (from the exit
/// and the member's log), stops the members of that attempt, deletes their data, and starts them all again
/// on newly picked ports (every member's peer URL is part of every member's configuration), at most
/// `attempts` times.
public enum EtcdClusterLauncher {
    /// One started member and its process (registered with ``EtcdProcessReaper``).
    public struct Started: Sendable {
        /// The member, with the ports it listens on.
        public let member: EtcdMember
        /// Its running etcd process.
        public let process: Process

        /// `member` running as `process` (launched with ``EtcdMember/launch(cluster:token:executable:logFile:extraArguments:)``).
        public init(member: EtcdMember, process: Process) {
            self.member = member
            self.process = process
        }
    }

    /// Starts one member per name in `directory` (data in `directory/NAME`, log in `directory/NAME.log`)
    /// as one cluster with `token`, and waits (at most `timeout` per attempt) until every member reports a
    /// leader. `ports` picks the ports (see ``EtcdMember/init(name:in:tls:ports:)``).
    /// Throws when a member fails for another reason than a taken port, or after `attempts` attempts.
    public static func start(
        names: [String], in directory: URL, tls: EtcdMemberTLS? = nil, token: String, executable: URL,
        extraArguments: [String] = [], timeout: Duration = .seconds(20), attempts: Int = 5,
        ports: () -> Int = freeLoopbackPort
    ) throws -> [Started] {
        var taken: [String] = []
        for _ in 0..<max(attempts, 1) {
            let members = names.map { EtcdMember(name: $0, in: directory, tls: tls, ports: ports) }
            var started: [Started] = []
            do {
                for member in members {
                    let process = try member.launch(
                        cluster: members, token: token, executable: executable,
                        logFile: logFile(of: member, in: directory),
                        extraArguments: extraArguments)
                    started.append(Started(member: member, process: process))
                }
                var portTaken: String?
                switch waitUntilStarted(started, in: directory, timeout: timeout) {
                case .healthy: break
                case .portTaken(let line): portTaken = line
                case .exited(let why): throw EtcdLaunchError(why)
                case .timedOut(let which):
                    throw EtcdLaunchError("etcd did not become ready within \(timeout): no leader at \(which)")
                }
                guard let portTaken else { return started }
                taken.append(portTaken)
            } catch {
                stop(started)
                throw error
            }
            stop(started)
        }
        throw EtcdLaunchError(
            "etcd could not bind its ports in \(attempts) attempts (each taken by another process meanwhile): \(taken.joined(separator: "; "))"
        )
    }

    /// Where `member`'s log goes.
    public static func logFile(of member: EtcdMember, in directory: URL) -> URL {
        directory.appendingPathComponent("\(member.name).log")
    }

    /// Polls every member (every 50 ms, at most `timeout`) until all report a leader or one has exited
    /// (a member waiting for a quorum with a dead peer would wait in vain); an exit is explained from the
    /// member's log in `directory` (``logFile(of:in:)``).
    public static func waitUntilStarted(_ started: [Started], in directory: URL, timeout: Duration)
        -> EtcdMember.StartOutcome
    {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var healthy = Set<String>()
        while true {
            for entry in started {
                if let exit = entry.member.exitOutcome(entry.process, logFile: logFile(of: entry.member, in: directory))
                {
                    return exit
                }
            }
            for entry in started where !healthy.contains(entry.member.name) && entry.member.hasLeader {
                healthy.insert(entry.member.name)
            }
            if healthy.count == started.count { return .healthy }
            if ContinuousClock.now >= deadline {
                let waiting = started.filter { !healthy.contains($0.member.name) }
                return .timedOut(
                    waiting.map { $0.member.notReadyDescription(logFile: logFile(of: $0.member, in: directory)) }
                        .joined(separator: "; "))
            }
            usleep(50_000)
        }
    }

    private static func stop(_ started: [Started]) {
        for entry in started {
            stopEtcdProcess(entry.process)
            try? FileManager.default.removeItem(at: entry.member.dataDirectory)
        }
    }
}
