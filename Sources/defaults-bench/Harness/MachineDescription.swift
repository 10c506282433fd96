import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The machine a run happened on, so numbers are read with their context.
struct MachineDescription: Sendable, Codable {
    var cpuModel: String
    var onlineCores: Int
    var memoryTotal: String
    var kernel: String
    var swiftVersion: String
    var buildConfiguration: String
    var temporaryDirectory: String
    var temporaryFileSystem: String
    var foundationUserDefaults: String

    static func current(temporaryDirectory: URL) -> MachineDescription {
        MachineDescription(
            cpuModel: cpuModel(),
            onlineCores: sysconf(Int32(_SC_NPROCESSORS_ONLN)),
            memoryTotal: memoryTotal(),
            kernel: kernel(),
            swiftVersion: swiftVersion(),
            buildConfiguration: buildConfiguration,
            temporaryDirectory: temporaryDirectory.path,
            temporaryFileSystem: fileSystemType(of: temporaryDirectory.path),
            foundationUserDefaults: "swift-corelibs-foundation (the Linux implementation, not Apple's)")
    }

    /// Label/value pairs for the Markdown report.
    var lines: [(String, String)] {
        [
            ("CPU", cpuModel), ("Online cores", String(onlineCores)), ("Memory", memoryTotal), ("Kernel", kernel),
            ("Swift", swiftVersion), ("Build", buildConfiguration),
            ("Temporary directory", "\(temporaryDirectory) (\(temporaryFileSystem))"),
            ("UserDefaults rows", foundationUserDefaults)
        ]
    }

    private static var buildConfiguration: String {
        #if DEBUG
            "debug (numbers are not representative; use -c release)"
        #else
            "release"
        #endif
    }

    private static func cpuModel() -> String {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") || line.hasPrefix("Model") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown"
    }

    private static func memoryTotal() -> String {
        guard let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("MemTotal:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return "unknown" }
        return String(format: "%.1f GiB", kilobytes / 1024 / 1024)
    }

    private static func kernel() -> String {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return "\(field(name.sysname)) \(field(name.release)) \(field(name.machine))"
    }

    /// `swift --version` when the toolchain is on `PATH`, else the compiler version this binary was built with.
    private static func swiftVersion() -> String {
        // The swift driver leaves a `TemporaryDirectory.*` behind in its TMPDIR: give it one to remove.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "defaults-bench-swift-version-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "--version"]
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = scratch.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        if (try? process.run()) != nil {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            if process.terminationStatus == 0,
                let first = String(decoding: data, as: UTF8.self).split(separator: "\n").first
            {
                return String(first)
            }
        }
        #if compiler(>=6.3)
            return "compiler 6.3 or newer"
        #else
            return "compiler older than 6.3"
        #endif
    }

    /// The type of the file system holding `path`: the mount in `/proc/self/mounts` with the longest mount
    /// point that contains the (symlink-resolved) path.
    static func fileSystemType(of path: String) -> String {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let text = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return "unknown" }
        var best: (mountPoint: String, type: String)?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mountPoint = fields[1].replacingOccurrences(of: "\\040", with: " ")
            let contains = mountPoint == "/" || resolved == mountPoint || resolved.hasPrefix(mountPoint + "/")
            if contains && mountPoint.count >= (best?.mountPoint.count ?? -1) { best = (mountPoint, String(fields[2])) }
        }
        return best.map { "\($0.type) mounted at \($0.mountPoint)" } ?? "unknown"
    }

    /// `/proc/loadavg`'s first three fields, to show how busy the machine was.
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}

/// Resident memory of this process (`VmRSS` in `/proc/self/status`), in bytes.
func residentMemoryBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    else { return 0 }
    return kilobytes * 1024
}
