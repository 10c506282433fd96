import Foundation
import Synchronization

/// A throwaway `etcd grpc-proxy` in front of running members, on a free loopback port, with its own data in
/// a temporary directory: started by the initializer (which waits, bounded, until the proxy reports itself
/// healthy), stopped by PID and its directory removed by ``stop()`` (or when released, or by
/// ``EtcdProcessReaper`` at exit).
///
/// The proxy serves etcd's gRPC API only (its JSON gateway answers 404); it coalesces identical watches
/// into one watch on a member and caches ranges.
public final class EtcdGRPCProxy: Sendable {
    /// Where clients reach the proxy (`http://127.0.0.1:PORT`).
    public let endpoint: URL
    /// The temporary directory holding the proxy's data directory and its log.
    public let directory: URL
    private let process: Mutex<Process?>

    /// Starts a proxy for the members at `members` (plain `http` client URLs) from `executable` (default:
    /// the `etcd` on `PATH`), on another port when the one picked is taken before the proxy binds it.
    /// Throws when there is no etcd, when the proxy exits, or when it is not healthy within `timeout`.
    public init(members: [URL], executable: URL? = EtcdBinary.find(), timeout: Duration = .seconds(20)) throws {
        guard let executable else { throw EtcdLaunchError("etcd is not installed: \(EtcdBinary.installCommand)") }
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("etcd-proxy-\(getpid())-\(UInt32.random(in: 0 ... .max))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        EtcdProcessReaper.register(directory: directory)
        let upstream = members.compactMap { url in url.host.flatMap { host in url.port.map { "\(host):\($0)" } } }
        var failures: [String] = []
        attempts: for _ in 0..<5 {
            let port = freeLoopbackPort()
            let endpoint = URL(string: "http://127.0.0.1:\(port)")!
            let log = directory.appendingPathComponent("proxy.log")
            do {
                let process = try Self.launch(
                    executable, upstream: upstream, port: port, dataDirectory: directory.appendingPathComponent("data"),
                    log: log)
                switch Self.waitUntilHealthy(process, endpoint: endpoint, log: log, timeout: timeout) {
                case nil:
                    self.endpoint = endpoint
                    self.process = Mutex(process)
                    return
                case .some(let why):
                    stopEtcdProcess(process)
                    failures.append(why)
                    if !why.contains("address already in use") { break attempts }
                }
            } catch {
                failures.append("cannot run \(executable.path): \(error)")
                break attempts
            }
        }
        try? FileManager.default.removeItem(at: directory)
        EtcdProcessReaper.unregister(directory: directory)
        throw EtcdLaunchError("etcd grpc-proxy did not start: \(failures.joined(separator: "; "))")
    }

    private static func launch(_ executable: URL, upstream: [String], port: Int, dataDirectory: URL, log: URL) throws
        -> Process
    {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = [
            "grpc-proxy", "start", "--endpoints", upstream.joined(separator: ","),
            "--listen-addr", "127.0.0.1:\(port)", "--advertise-client-url", "127.0.0.1:\(port)",
            "--data-dir", dataDirectory.path
        ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        EtcdProcessReaper.register(process.processIdentifier)
        return process
    }

    /// Polls the proxy's `/health` every 50 ms until it says healthy (`nil`), it exits or `timeout` passes
    /// (why, from its log).
    private static func waitUntilHealthy(_ process: Process, endpoint: URL, log: URL, timeout: Duration) -> String? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if !process.isRunning {
                let lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
                return "it exited with status \(process.terminationStatus): \(lines.suffix(3).joined(separator: "\n"))"
            }
            if etcdGet(endpoint, "/health")?.contains(#""health":"true""#) == true { return nil }
            usleep(50_000)
        }
        return "it did not report itself healthy at \(endpoint.absoluteString) within \(timeout)"
    }

    /// The process ID while it runs.
    public var pid: Int32? { process.withLock { $0?.processIdentifier } }

    /// Kills the proxy and deletes its data; idempotent.
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
