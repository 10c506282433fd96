import Foundation

/// Group 8: the compile time of one `@ObservableDefaults` class with N persisted properties, read from the
/// output of `Compile/time-macro-compile.sh` (it compiles outside this process: the bench is a release
/// binary, the measurement needs the compiler and the built plugin). Each line is
/// `compile<TAB>N<TAB>seconds`; several lines for one N are several samples.
enum CompileTimeResults {
    static let number = 8
    static let title = "Compile time of an `@ObservableDefaults` class (debug)"

    /// The group built from the script's output at `url`, or an error naming the file and line that is wrong.
    static func read(_ url: URL) throws -> GroupResult {
        let text = try String(contentsOf: url, encoding: .utf8)
        var samples: [Int: [Double]] = [:]
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.isEmpty {
            let fields = line.split(separator: "\t")
            guard fields.count == 3, fields[0] == "compile", let count = Int(fields[1]), let seconds = Double(fields[2])
            else {
                throw CompileTimeFileError(
                    description:
                        "\(url.path):\(index + 1): expected `compile<TAB>N<TAB>seconds` from time-macro-compile.sh, found \"\(line)\""
                )
            }
            samples[count, default: []].append(seconds * 1e9)
        }
        let counts = samples.keys.sorted()
        guard let smallest = counts.first else {
            throw CompileTimeFileError(
                description: "\(url.path): no measurements (run Sources/defaults-bench/Compile/time-macro-compile.sh)")
        }
        var group = GroupResult(
            number: number, title: title,
            method:
                "`sh Sources/defaults-bench/Compile/time-macro-compile.sh` generates one class with N `Int` properties "
                + "(`var pI = I`), compiles it with `swiftc -Onone -g -c` and the package's built plugin, and prints the wall "
                + "clock time; this report reads that output (`--compile-times FILE`). Ratio: against the smallest N; "
                + "linear compile time gives about N ÷ \(smallest) minus the fixed start-up cost.")
        for count in counts {
            group.append(
                ResultRow(
                    id: "compile.\(count)", name: "N=\(count) properties", statistics: Statistics(samples[count] ?? []))
            )
        }
        for count in counts.dropFirst() { group.relate("compile.\(count)", to: "compile.\(smallest)") }
        return group
    }

    /// The issue 12 target: a 400-property class compiles in < 15 s.
    static func target(_ group: GroupResult) -> TargetResult {
        let name = "A 400-property `@ObservableDefaults` class compiles in < 15 s (debug)"
        guard let row = group.row("compile.400") else {
            return TargetResult(
                target: name, status: .notMeasured, evidence: "no N = 400 line in the compile-time file")
        }
        var evidence = "p50 \(Formatting.duration(row.statistics.p50)) over \(row.statistics.count) compiles"
        if let ratio = row.ratio { evidence += "; \(Formatting.ratio(ratio.value)) vs \(ratio.reference)" }
        return TargetResult(target: name, status: row.statistics.p50 < 15e9 ? .met : .notMet, evidence: evidence)
    }
}

/// A compile-time file that is not what `time-macro-compile.sh` writes.
struct CompileTimeFileError: Error, CustomStringConvertible {
    var description: String
}
