/// What a row's numbers count.
enum MetricUnit: String, Sendable, Codable {
    /// Time per operation or per event.
    case nanoseconds
    /// Memory or file size.
    case bytes
    /// Throughput.
    case perSecond
    /// A plain count (samples received, keys lost).
    case count
}

/// A row's value divided by another row's value (both medians, from this run).
struct Ratio: Sendable, Codable {
    var value: Double
    /// The row it is divided by.
    var reference: String
}

/// One line of the report: what was measured, its distribution, and optionally a ratio to a reference.
struct ResultRow: Sendable, Codable {
    /// A stable identifier (used by targets and in the JSON): `group.subject.variant`.
    var id: String
    /// What the row measures, as the table shows it.
    var name: String
    var unit: MetricUnit
    var statistics: Statistics
    var ratio: Ratio?
    var note: String?

    init(id: String, name: String, unit: MetricUnit = .nanoseconds, statistics: Statistics, note: String? = nil) {
        self.id = id
        self.name = name
        self.unit = unit
        self.statistics = statistics
        self.note = note
    }

    /// A row that could not be measured in this run, with the reason.
    static func missing(id: String, name: String, reason: String) -> ResultRow {
        var row = ResultRow(id: id, name: name, statistics: Statistics([]), note: reason)
        row.isMissing = true
        return row
    }

    var isMissing = false
}

/// A benchmark group: one table in the report.
struct GroupResult: Sendable, Codable {
    var number: Int
    var title: String
    /// What the group compares and how it is measured.
    var method: String
    var rows: [ResultRow]
    var notes: [String] = []

    init(number: Int, title: String, method: String, rows: [ResultRow] = [], notes: [String] = []) {
        self.number = number
        self.title = title
        self.method = method
        self.rows = rows
        self.notes = notes
    }

    func row(_ id: String) -> ResultRow? { rows.first { $0.id == id && !$0.isMissing } }

    /// Sets the ratio of row `id` to row `reference` (medians).
    mutating func relate(_ id: String, to reference: String) {
        guard let index = rows.firstIndex(where: { $0.id == id && !$0.isMissing }),
            let base = row(reference), base.statistics.p50 > 0
        else { return }
        rows[index].ratio = Ratio(value: rows[index].statistics.p50 / base.statistics.p50, reference: base.name)
    }

    mutating func append(_ row: ResultRow) { rows.append(row) }
}

/// Where a target of issue 5 stands in this run.
struct TargetResult: Sendable, Codable {
    enum Status: String, Sendable, Codable {
        case met
        case notMet = "not met"
        case notMeasured = "not measured"
        /// Numbers shown for comparison; there is no threshold to meet.
        case reported = "reported (no target)"
    }

    var target: String
    var status: Status
    var evidence: String
}

/// Everything one run produced.
struct BenchmarkReport: Sendable, Codable {
    var machine: MachineDescription
    var settings: RunSettings
    var startedAt: String
    var durationSeconds: Double
    var loadAverageBefore: String
    var loadAverageAfter: String
    var groups: [GroupResult]
    var targets: [TargetResult]
    var checksum: Int
}
