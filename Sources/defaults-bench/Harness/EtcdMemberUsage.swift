import EtcdLauncher
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What an etcd process costs the machine, read from `/proc`, and how many watchers it serves, read from
/// its `/metrics`: for the fleet group (group 11), which charges a member's memory and CPU to the watchers
/// a fleet opens on it.
struct EtcdMemberUsage {
    /// Resident memory (`VmRSS`), in bytes.
    var residentBytes: Int
    /// User plus system CPU time so far, in nanoseconds (clock-tick resolution: 10 ms).
    var cpuNanoseconds: Int

    /// The usage of process `pid` now; `nil` when it is gone.
    static func of(_ pid: Int32) -> EtcdMemberUsage? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }),
            let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.range(of: ") ")?.upperBound
        else { return nil }
        // Fields after the command name start at field 3 (state); utime and stime are fields 14 and 15.
        let fields = stat[afterName...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        let tick = 1_000_000_000 / max(1, sysconf(Int32(_SC_CLK_TCK)))
        return EtcdMemberUsage(residentBytes: kilobytes * 1024, cpuNanoseconds: (user + system) * tick)
    }

    /// How many watchers the member at `endpoint` serves (`etcd_debugging_mvcc_watcher_total`); `nil` when
    /// its metrics cannot be read.
    static func watcherCount(_ endpoint: URL) -> Int? {
        guard let metrics = etcdGet(endpoint, "/metrics"),
            let line = metrics.split(separator: "\n").first(where: {
                $0.hasPrefix("etcd_debugging_mvcc_watcher_total ")
            }),
            let value = line.split(separator: " ").last.flatMap({ Double($0) })
        else { return nil }
        return Int(value)
    }
}
