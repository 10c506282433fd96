import EtcdLauncher
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What an etcd process costs the machine, read from `/proc`: for the fleet group (group 11), which charges a
/// member's memory and CPU to the watchers a fleet opens on it (counted with `etcdWatcherCount`).
struct EtcdMemberUsage {
    /// Resident memory (`VmRSS`), in bytes.
    var residentBytes: Int
    /// CPU time so far, in nanoseconds: its threads' time on a CPU, else user plus system time (10 ms ticks).
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
        return EtcdMemberUsage(
            residentBytes: kilobytes * 1024, cpuNanoseconds: threadsCPU(pid) ?? (user + system) * tick)
    }

    /// The CPU time of `pid`'s threads now, in nanoseconds (`/proc/PID/task/*/schedstat`, exact where the
    /// process's clock ticks are 10 ms): etcd's threads live as long as it does.
    private static func threadsCPU(_ pid: Int32) -> Int? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else {
            return nil
        }
        var total = 0
        for thread in threads {
            guard let line = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/schedstat", encoding: .utf8),
                let running = line.split(separator: " ").first.flatMap({ Int($0) })
            else { continue }
            total += running
        }
        return total
    }
}
