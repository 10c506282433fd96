#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The system-wide monotonic clock in nanoseconds. `CLOCK_MONOTONIC` is the same clock in every process
/// on the machine, so a stamp taken in one process can be subtracted from a reading in another.
@inline(__always)
func monotonicNanoseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return time.tv_sec * 1_000_000_000 + time.tv_nsec
}

/// Sleeps the calling thread for `nanoseconds` (restarting after signals).
func sleepNanoseconds(_ nanoseconds: Int) {
    guard nanoseconds > 0 else { return }
    var request = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// Sleeps until the monotonic clock reads `deadline`.
func sleepUntil(_ deadline: Int) {
    sleepNanoseconds(deadline - monotonicNanoseconds())
}
