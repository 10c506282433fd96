import Foundation
import Synchronization

/// A throwaway single-node etcd on a free loopback port, with its data in a temporary directory: started
/// by the initializer (which waits, bounded, until it has a leader), stopped by PID and its directory
/// removed by ``stop()`` (or when released, or by ``EtcdProcessReaper`` at exit).
public final class EtcdNode: Sendable {
    /// The node's client URL (`http://127.0.0.1:PORT`).
    public let endpoint: URL
    /// The temporary directory holding the data directory and the log.
    public let directory: URL
    private let process: Mutex<Process?>

    /// Starts etcd from `executable` (default: the one on `PATH`), on other ports when a port picked is
    /// taken before etcd binds it (``EtcdClusterLauncher``). Throws when there is no etcd, when it cannot
    /// start, or when it has no leader within `timeout`.
    public init(executable: URL? = EtcdBinary.find(), timeout: Duration = .seconds(20)) throws {
        guard let executable else { throw EtcdLaunchError("etcd is not installed: \(EtcdBinary.installCommand)") }
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("etcd-\(getpid())-\(UInt32.random(in: 0 ... .max))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        EtcdProcessReaper.register(directory: directory)
        do {
            let started = try EtcdClusterLauncher.start(
                names: ["node"], in: directory, token: directory.lastPathComponent, executable: executable,
                timeout: timeout)[0]
            endpoint = started.member.clientURL
            process = Mutex(started.process)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            EtcdProcessReaper.unregister(directory: directory)
            throw error
        }
    }

    /// The process ID while it runs.
    public var pid: Int32? { process.withLock { $0?.processIdentifier } }

    /// Kills the node and deletes its data; idempotent.
    public func stop() {
        guard
            let running = process.withLock({ value -> Process? in
                defer { value = nil }; return value
            })
        else { return }
        stopEtcdProcess(running)
        try? FileManager.default.removeItem(at: directory)
        EtcdProcessReaper.unregister(directory: directory)
    }

    deinit { stop() }
}

/// Why etcd could not be started.
public struct EtcdLaunchError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
