/// How long and how often each measurement runs. `--quick` shrinks everything so a smoke run takes
/// seconds; the full run gives every row enough samples for stable medians and percentiles.
struct RunSettings: Sendable, Codable {
    var quick: Bool
    /// Aim for one sample (a batch of operations) to take at least this long, so clock overhead and
    /// timer resolution vanish in it.
    var sampleTargetNanoseconds: Int
    /// Run the body this long before sampling (caches, branch predictors, lazy initialisation, page faults).
    var warmUpNanoseconds: Int
    /// Keep sampling at least this long…
    var budgetNanoseconds: Int
    /// …and take at least this many samples, but no more than `maxSamples`.
    var minSamples: Int
    var maxSamples: Int
    /// Latency samples per cross-process row (the issue asks for at least 1,000).
    var latencySamples: Int
    /// Fan-out samples per row (each is one file event).
    var eventSamples: Int
    /// How long the concurrent writers run.
    var writerDurationNanoseconds: Int
    /// Suite sizes for the scale group.
    var scaleSizes: [Int]
    /// Property counts for the fan-out group.
    var fanOutSizes: [Int]

    static let full = RunSettings(
        quick: false, sampleTargetNanoseconds: 200_000, warmUpNanoseconds: 30_000_000,
        budgetNanoseconds: 250_000_000, minSamples: 100, maxSamples: 2_000, latencySamples: 1_000,
        eventSamples: 300, writerDurationNanoseconds: 3_000_000_000, scaleSizes: [10, 1_000, 100_000],
        fanOutSizes: [10, 100, 1_000])

    static let quickRun = RunSettings(
        quick: true, sampleTargetNanoseconds: 20_000, warmUpNanoseconds: 1_000_000,
        budgetNanoseconds: 3_000_000, minSamples: 5, maxSamples: 50, latencySamples: 40,
        eventSamples: 10, writerDurationNanoseconds: 300_000_000, scaleSizes: [10, 1_000],
        fanOutSizes: [10, 100, 1_000])
}

/// Times a body that performs `n` operations and returns a checksum of their results.
enum Sampler {
    /// Per-operation time in nanoseconds: the body is calibrated to a batch size whose run takes about
    /// ``RunSettings/sampleTargetNanoseconds``, warmed up, then sampled until both the time budget and
    /// the minimum sample count are reached. Each sample is one batch's time divided by its size.
    static func perOperation(_ settings: RunSettings, maxBatch: Int = 1 << 22, _ body: (Int) -> Int) -> Statistics {
        let batch = calibrate(settings, maxBatch: maxBatch, body)
        let warmUpEnd = monotonicNanoseconds() + settings.warmUpNanoseconds
        repeat { _ = timed(body, batch) } while monotonicNanoseconds() < warmUpEnd
        var samples: [Double] = []
        samples.reserveCapacity(settings.maxSamples)
        let sampleEnd = monotonicNanoseconds() + settings.budgetNanoseconds
        while samples.count < settings.maxSamples
            && (samples.count < settings.minSamples || monotonicNanoseconds() < sampleEnd)
        {
            samples.append(Double(timed(body, batch)) / Double(batch))
        }
        return Statistics(samples)
    }

    /// A body to compare with others in ``interleaved(_:_:)``.
    struct Candidate {
        var maxBatch: Int = 1 << 22
        var body: (Int) -> Int
    }

    /// Per-operation times of several bodies measured side by side: each is calibrated on its own, then
    /// warm-up and sampling go in rounds (one batch of each, in a fresh random order per round), so a burst
    /// of load from other processes on the machine hits every side of a ratio alike instead of whichever
    /// row ran at the time.
    static func interleaved(_ settings: RunSettings, _ candidates: [Candidate]) -> [Statistics] {
        let batches = candidates.map { calibrate(settings, maxBatch: $0.maxBatch, $0.body) }
        let warmUpEnd = monotonicNanoseconds() + settings.warmUpNanoseconds * candidates.count
        repeat {
            for (candidate, batch) in zip(candidates, batches) { _ = timed(candidate.body, batch) }
        } while monotonicNanoseconds() < warmUpEnd
        var samples = [[Double]](repeating: [], count: candidates.count)
        let sampleEnd = monotonicNanoseconds() + settings.budgetNanoseconds * candidates.count
        var rounds = 0
        var order = Array(candidates.indices)
        while rounds < settings.maxSamples && (rounds < settings.minSamples || monotonicNanoseconds() < sampleEnd) {
            // A new order every round: what one body leaves behind (dirty pages, a journal commit, a cold
            // cache) must not always land on the same neighbour.
            order.shuffle()
            for index in order {
                samples[index].append(Double(timed(candidates[index].body, batches[index])) / Double(batches[index]))
            }
            rounds += 1
        }
        return samples.map(Statistics.init)
    }

    /// The batch size whose run takes about ``RunSettings/sampleTargetNanoseconds``. First calls are cold
    /// (lazy initialisation, page faults, first lock): a few run before calibrating, and each size is
    /// judged by the fastest of three runs so one slow run cannot pick a tiny batch.
    private static func calibrate(_ settings: RunSettings, maxBatch: Int, _ body: (Int) -> Int) -> Int {
        for _ in 0..<3 { _ = timed(body, 1) }
        var batch = 1
        while batch < maxBatch {
            let elapsed = (0..<3).map { _ in timed(body, batch) }.min() ?? 0
            if elapsed >= settings.sampleTargetNanoseconds { break }
            let scale = elapsed <= 0 ? 16 : min(16, max(2, settings.sampleTargetNanoseconds / max(elapsed, 1)))
            batch = min(maxBatch, batch * scale)
        }
        return batch
    }

    /// Time of one event-style operation (one file write, one reload), each timed on its own: `body`
    /// returns the nanoseconds it measured (or `nil` to drop a sample it could not measure cleanly).
    static func events(count: Int, warmUp: Int, _ body: () -> Int?) -> (Statistics, dropped: Int) {
        for _ in 0..<warmUp { _ = body() }
        var samples: [Double] = []
        var dropped = 0
        for _ in 0..<count {
            if let value = body() { samples.append(Double(value)) } else { dropped += 1 }
        }
        return (Statistics(samples), dropped)
    }

    /// Runs `body(n)` once through a call the optimizer cannot inline, consumes its checksum, and returns
    /// the elapsed nanoseconds.
    @inline(never)
    static func timed(_ body: (Int) -> Int, _ n: Int) -> Int {
        let start = monotonicNanoseconds()
        let checksum = body(n)
        let end = monotonicNanoseconds()
        Blackhole.consume(checksum)
        return end - start
    }
}
