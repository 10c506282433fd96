/// Order statistics of a set of samples (nanoseconds, bytes, or any other unit the row names).
struct Statistics: Sendable, Codable {
    var count: Int
    var min: Double
    var p50: Double
    var p90: Double
    var p99: Double
    var max: Double
    var mean: Double

    /// Nearest-rank percentiles of `samples` (which need not be sorted). Empty input gives zeros.
    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        guard !sorted.isEmpty else {
            (min, p50, p90, p99, max, mean) = (0, 0, 0, 0, 0, 0)
            return
        }
        func percentile(_ p: Double) -> Double {
            // Nearest rank: the smallest value with at least p of the samples at or below it.
            let rank = Int((p * Double(sorted.count)).rounded(.up))
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
        }
        min = sorted[0]
        p50 = percentile(0.50)
        p90 = percentile(0.90)
        p99 = percentile(0.99)
        max = sorted[sorted.count - 1]
        mean = sorted.reduce(0, +) / Double(sorted.count)
    }

    /// One value repeated (a throughput or a count measured once).
    init(single value: Double) {
        self.init([value])
    }
}
