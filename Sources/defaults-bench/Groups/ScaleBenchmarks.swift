import Foundation
import ObservableDefaults

/// Group 6: suites of 10, 1,000 and 100,000 keys in JSON and property-list form: load time, resident memory,
/// and the cost of one changed key in the largest suite (re-read + diff).
enum ScaleBenchmarks {
    static func run(_ context: BenchContext) -> GroupResult {
        let settings = context.settings
        var group = GroupResult(
            number: 6, title: "Scale",
            method: "Suites of mixed values (string, integer, double, boolean in turn) written once by the library. "
                + "Load = `DefaultsSuite(fileURL:)` on a path no handle has open (read + parse + build the dictionary), "
                + "each sample a fresh storage. Foundation rows parse the same file with `JSONSerialization` / "
                + "`PropertyListSerialization`. Memory = growth of `VmRSS` across the load in a fresh child process that "
                + "first loaded and dropped a 10-key suite, so code and runtime pages are not counted (median of children; "
                + "page-granular, and freed memory the allocator keeps still counts). One change = the file is replaced with a version differing in one key, then "
                + "`reload()` re-reads and diffs it.")
        for format in [SuiteFormat.json, .propertyList] {
            let label = format == .json ? "JSON" : "plist"
            for size in settings.scaleSizes {
                context.progress("6. scale: \(label), \(size) keys")
                let file = context.directory("scale-\(format.rawValue)-\(size)").appendingPathComponent(
                    "suite.\(format.fileExtension)")
                generate(file, keys: size)
                let fileSize = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
                let samples = settings.quick ? 3 : max(10, min(200, 2_000_000 / max(size, 1)))
                let sizeText = "\(Formatting.grouped(Double(size))) keys"

                let (load, _) = Sampler.events(count: samples, warmUp: settings.quick ? 1 : 2) {
                    let start = monotonicNanoseconds()
                    let suite = openSuite(file)
                    let probe = suite.value(forKey: "key000000")
                    let end = monotonicNanoseconds()
                    Blackhole.consume(probe == nil ? 0 : 1)
                    return end - start
                }
                group.append(
                    ResultRow(
                        id: "\(format.rawValue).\(size).load",
                        name: "\(label), \(sizeText): load (`DefaultsSuite(fileURL:)`)",
                        statistics: load, note: "file \(Formatting.bytes(Double(fileSize)))"))

                let (foundation, _) = Sampler.events(count: samples, warmUp: settings.quick ? 1 : 2) {
                    let start = monotonicNanoseconds()
                    let count = foundationParse(file, format: format)
                    let end = monotonicNanoseconds()
                    Blackhole.consume(count)
                    return end - start
                }
                group.append(
                    ResultRow(
                        id: "\(format.rawValue).\(size).foundation",
                        name:
                            "\(label), \(sizeText): Foundation \(format == .json ? "`JSONSerialization`" : "`PropertyListSerialization`") parse",
                        statistics: foundation))
                group.relate("\(format.rawValue).\(size).load", to: "\(format.rawValue).\(size).foundation")

                let warmUp = context.directory("scale-warmup-\(format.rawValue)").appendingPathComponent(
                    "warmup.\(format.fileExtension)")
                generate(warmUp, keys: 10)
                group.append(
                    memoryRow(
                        file, warmUp: warmUp, keys: size, id: "\(format.rawValue).\(size).memory",
                        name: "\(label), \(sizeText): resident memory growth on load",
                        children: settings.quick ? 1 : 3))
            }
            if let largest = settings.scaleSizes.max() {
                context.progress("6. scale: \(label), one change in \(largest) keys")
                group.append(oneChangeRow(context, format: format, keys: largest, label: label))
                if format == .json {
                    context.progress("6. scale: JSON laid out by hand with comments, one change in \(largest) keys")
                    group.append(
                        oneChangeRow(context, format: format, keys: largest, label: label, handFormatted: true))
                    group.relate("json.change.commented", to: "json.change")
                }
            }
        }
        if settings.quick { group.notes.append("`--quick` skips the 100,000-key suites.") }
        return group
    }

    /// Writes a suite of `keys` keys `key000000 …` in one batch.
    static func generate(_ file: URL, keys: Int) {
        let suite = openSuite(file)
        suite.performBatchUpdates {
            for index in 0..<keys { suite.set(value(index), forKey: key(index)) }
        }
        do { try suite.flush() } catch { fail("cannot write \(file.path): \(error)") }
    }

    static func key(_ index: Int) -> String {
        "key" + String(repeating: "0", count: max(0, 6 - String(index).count)) + String(index)
    }

    static func value(_ index: Int) -> DefaultsValue {
        switch index % 4 {
        case 0: .string("value-\(key(index))-a")
        case 1: .integer(index * 7)
        case 2: .double(Double(index) + 0.5)
        default: .bool(index % 8 == 3)
        }
    }

    private static func foundationParse(_ file: URL, format: SuiteFormat) -> Int {
        guard let data = try? Data(contentsOf: file) else { return 0 }
        switch format {
        case .json: return ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?.count ?? 0
        case .propertyList:
            return ((try? PropertyListSerialization.propertyList(from: data, format: nil)) as? [String: Any])?.count
                ?? 0
        }
    }

    /// Median `VmRSS` growth of fresh child processes loading the file.
    private static func memoryRow(_ file: URL, warmUp: URL, keys: Int, id: String, name: String, children: Int)
        -> ResultRow
    {
        var growth: [Double] = []
        var coldLoad: [Double] = []
        for _ in 0..<children {
            guard let child = try? ChildProcess(["load", file.path, warmUp.path]) else { continue }
            var before = 0, after = 0
            while let line = child.readLine() {
                let fields = line.split(separator: " ")
                guard fields.count == 2, let number = Int(fields[1]) else { continue }
                switch fields[0] {
                case "rss-before": before = number
                case "rss-after": after = number
                case "load-ns": coldLoad.append(Double(number))
                default: break
                }
            }
            if child.wait() == 0 { growth.append(Double(after - before)) }
        }
        let cold = Statistics(coldLoad)
        let memory = Statistics(growth)
        let perKey = keys >= 1_000 ? String(format: "%.0f B/key; ", memory.p50 / Double(keys)) : ""
        return ResultRow(
            id: id, name: name, unit: .bytes, statistics: memory,
            note: perKey + "load in a fresh process (after a 10-key warm-up load): \(Formatting.duration(cold.p50))")
    }

    /// Replaces the largest suite with versions differing in one key and times `reload()`. With
    /// `handFormatted`, the file is laid out as a person might (see ``layOutByHand(_:)``) first.
    private static func oneChangeRow(
        _ context: BenchContext, format: SuiteFormat, keys: Int, label: String, handFormatted: Bool = false
    ) -> ResultRow {
        let file = context.directory("scale-change-\(format.rawValue)\(handFormatted ? "-commented" : "")")
            .appendingPathComponent("suite.\(format.fileExtension)")
        generate(file, keys: keys)
        if handFormatted {
            guard let bytes = RawFile.readAll(file.path) else { fail("cannot read \(file.path)") }
            RawFile.renameOver(file.path, layOutByHand(bytes))
        }
        let (original, changed) = versions(of: file)
        let suite = openSuite(file)
        var flip = false
        let (statistics, dropped) = Sampler.events(count: context.settings.quick ? 3 : 30, warmUp: 2) {
            flip.toggle()
            RawFile.renameOver(file.path, flip ? changed : original)
            let start = monotonicNanoseconds()
            suite.reload()
            let end = monotonicNanoseconds()
            let expected = flip ? "value-key000000-b" : "value-key000000-a"
            return suite.value(String.self, forKey: "key000000") == expected ? end - start : nil
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        var notes = handFormatted ? ["file \(Formatting.bytes(Double(size)))"] : []
        if dropped > 0 { notes.append("\(dropped) samples did not see the change") }
        return ResultRow(
            id: "\(format.rawValue).change\(handFormatted ? ".commented" : "")",
            name: "\(label), \(Formatting.grouped(Double(keys))) keys"
                + (handFormatted ? ", laid out by hand with comments (4 spaces, a comment line per member)" : "")
                + ": one key changed on disk, `reload()` (re-read + diff)",
            statistics: statistics, note: notes.isEmpty ? nil : notes.joined(separator: "; "))
    }

    /// The library's JSON laid out as a person might write it: four spaces, a `//` comment line before
    /// every member, a `/* … */` comment after each tenth value, and a trailing comma.
    static func layOutByHand(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var member = 0
        for (index, line) in lines.enumerated() {
            if line.starts(with: Array("  \"".utf8)) {
                output += Array("    // setting \(member)\n    ".utf8)
                var text = Array(line.dropFirst(2))
                if member % 10 == 0 {
                    let hasComma = text.last == UInt8(ascii: ",")
                    if hasComma { text.removeLast() }
                    text += Array(" /* checked */".utf8)
                    if hasComma { text.append(UInt8(ascii: ",")) }
                }
                if index + 2 == lines.count - 1 { text.append(UInt8(ascii: ",")) }
                output += text
                member += 1
            } else {
                output += line
            }
            if index < lines.count - 1 { output.append(UInt8(ascii: "\n")) }
        }
        return output
    }

    /// The generated suite's bytes, and the same bytes with one value (of `key000000`) changed.
    static func versions(of file: URL) -> (original: [UInt8], changed: [UInt8]) {
        guard let original = RawFile.readAll(file.path) else { fail("cannot read \(file.path)") }
        return (
            original, replacing(Array("value-key000000-a".utf8), with: Array("value-key000000-b".utf8), in: original)
        )
    }

    private static func replacing(_ old: [UInt8], with new: [UInt8], in bytes: [UInt8]) -> [UInt8] {
        var index = 0
        while index + old.count <= bytes.count {
            if bytes[index] == old[0] && Array(bytes[index..<(index + old.count)]) == old {
                var result = bytes
                result.replaceSubrange(index..<(index + old.count), with: new)
                return result
            }
            index += 1
        }
        fail("the generated suite does not contain the marker value")
    }
}
