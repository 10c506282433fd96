#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What this process has used so far (`getrusage(RUSAGE_SELF)`): CPU time and how often it gave up the CPU
/// to wait. A child reports it as a line (``line``) when its parent asks, so the parent can tell what a
/// stretch of work cost the child.
struct ProcessUsage: Sendable {
    /// User plus system CPU time, in nanoseconds.
    var cpuNanoseconds: Int
    /// Voluntary context switches: each wait for something (a lock, a read, another thread's wake-up).
    var voluntarySwitches: Int

    static func current() -> ProcessUsage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func nanoseconds(_ time: timeval) -> Int { time.tv_sec * 1_000_000_000 + Int(time.tv_usec) * 1_000 }
        return ProcessUsage(
            cpuNanoseconds: nanoseconds(usage.ru_utime) + nanoseconds(usage.ru_stime),
            voluntarySwitches: usage.ru_nvcsw)
    }

    /// The line a child prints: `usage CPU_NANOSECONDS VOLUNTARY_SWITCHES`.
    var line: String { "usage \(cpuNanoseconds) \(voluntarySwitches)" }
}

// In an extension, so the struct keeps its memberwise initialiser.
extension ProcessUsage {
    /// Reads ``line``'s form; `nil` for any other line.
    init?(line: String) {
        let fields = line.split(separator: " ")
        guard fields.count == 3, fields[0] == "usage", let cpu = Int(fields[1]), let switches = Int(fields[2]) else {
            return nil
        }
        self.init(cpuNanoseconds: cpu, voluntarySwitches: switches)
    }
}
