import Dispatch
import Synchronization

/// Hands one awaited value from an observer (any thread) to the measuring thread, with its arrival time.
///
/// The measuring thread calls ``expect(_:)`` before it causes a change, then ``wait(timeoutNanoseconds:)``;
/// the observer calls ``arrive(_:)`` with the value it saw. Only the expected value counts, so stale or
/// repeated notifications cannot complete a sample.
final class ArrivalRecorder: Sendable {
    private struct State {
        var expected: Int = .min
        var arrivedAt: Int?
    }

    private let state = Mutex(State())
    private let signal = DispatchSemaphore(value: 0)

    func expect(_ value: Int) {
        state.withLock { $0 = State(expected: value, arrivedAt: nil) }
    }

    /// Records `value` as arrived now if it is the expected one (first arrival only).
    func arrive(_ value: Int) {
        let now = monotonicNanoseconds()
        let matched = state.withLock { state -> Bool in
            guard state.expected == value, state.arrivedAt == nil else { return false }
            state.arrivedAt = now
            return true
        }
        if matched { signal.signal() }
    }

    /// The arrival time of the expected value, or `nil` after the timeout.
    func wait(timeoutNanoseconds: Int = 2_000_000_000) -> Int? {
        let deadline = DispatchTime.now() + .nanoseconds(timeoutNanoseconds)
        while signal.wait(timeout: deadline) == .success {
            if let arrived = state.withLock({ $0.arrivedAt }) { return arrived }
        }
        return state.withLock { $0.arrivedAt }
    }
}

/// Collects latency samples from another thread.
final class SampleCollector: Sendable {
    private let samples = Mutex<[Double]>([])

    func add(_ nanoseconds: Int) { samples.withLock { $0.append(Double(nanoseconds)) } }

    var count: Int { samples.withLock { $0.count } }

    var all: [Double] { samples.withLock { $0 } }
}
