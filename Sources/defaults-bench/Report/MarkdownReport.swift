import Foundation

/// Renders a run as Markdown: machine, one table per group, then the targets.
enum MarkdownReport {
    static func render(_ report: BenchmarkReport) -> String {
        var lines: [String] = []
        lines.append(
            "# defaults-bench\(report.settings.quick ? " (--quick: smoke run, numbers are not meaningful)" : "")")
        lines.append("")
        lines.append(
            "Started \(report.startedAt), took \(String(format: "%.1f", report.durationSeconds)) s. "
                + "Load average before: \(report.loadAverageBefore); after: \(report.loadAverageAfter).")
        lines.append("")
        lines.append("## Machine")
        lines.append("")
        for (label, value) in report.machine.lines { lines.append("- \(label): \(value)") }
        lines.append("")
        lines.append(
            "Times are per operation or per event; p50/p90/p99 are nearest-rank percentiles over the samples "
                + "(`n`). Ratio = this row's p50 ÷ the named row's p50, both from this run.")
        for group in report.groups {
            lines.append("")
            lines.append("## \(group.number). \(group.title)")
            lines.append("")
            lines.append(group.method)
            lines.append("")
            lines.append("| Benchmark | p50 | p90 | p99 | n | Ratio (p50) | Note |")
            lines.append("|---|---:|---:|---:|---:|---|---|")
            for row in group.rows { lines.append(tableRow(row)) }
            for note in group.notes {
                lines.append("")
                lines.append("- \(note)")
            }
        }
        lines.append("")
        lines.append("## Targets (issue 5)")
        lines.append("")
        lines.append("| Target | Status | Evidence |")
        lines.append("|---|---|---|")
        for target in report.targets {
            lines.append("| \(escape(target.target)) | \(target.status.rawValue) | \(escape(target.evidence)) |")
        }
        lines.append("")
        lines.append("Checksum of all measured results (keeps the work observable): \(report.checksum)")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func tableRow(_ row: ResultRow) -> String {
        if row.isMissing {
            return "| \(escape(row.name)) | — | — | — | 0 | | \(escape(row.note ?? "not measured")) |"
        }
        let stats = row.statistics
        let spread = stats.count > 1
        let ratio = row.ratio.map { "\(Formatting.ratio($0.value)) vs \($0.reference)" } ?? ""
        return "| \(escape(row.name)) | \(Formatting.value(stats.p50, row.unit)) | "
            + "\(spread ? Formatting.value(stats.p90, row.unit) : "—") | \(spread ? Formatting.value(stats.p99, row.unit) : "—") | "
            + "\(stats.count) | \(escape(ratio)) | \(escape(row.note ?? "")) |"
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
