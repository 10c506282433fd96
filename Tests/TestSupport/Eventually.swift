import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Polls `condition` every millisecond until it holds or `timeout` passes; returns whether it held.
///
/// Bounded polling on a condition is how tests wait; the timeout only ends a wait that went wrong, so it
/// is generous (a loaded machine is slow, not wrong). A test never waits a fixed time to prove that
/// something did *not* happen: it waits for a positive marker that comes after it.
///
/// Disfavoured, so that in an asynchronous context `await eventually(timeout:)` is the asynchronous variant
/// (otherwise the one that needs no default argument would win, and block the thread).
@_disfavoredOverload
package func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(1000)
    }
    return condition()
}

/// ``eventually(timeout:_:)`` for asynchronous tests: sleeps between polls instead of blocking the thread, on
/// the caller's actor (a main-actor test lets the main queue deliver meanwhile).
package func eventually(
    isolation: isolated (any Actor)? = #isolation, timeout: Duration = .seconds(10), _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
