import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Leaves this process without a free file descriptor: lowers its own limit to 256 first (so the machine's
/// file table, and every other test, is left alone), then opens `/dev/null` until `open` fails. Dispatch
/// gets its event descriptors before (``warmUpDispatch()``) unless `warmingUpDispatch` is `false`. Returns
/// the descriptors taken, for ``freeDescriptors(_:)``.
func takeEveryDescriptor(warmingUpDispatch: Bool = true) -> [Int32] {
    if warmingUpDispatch { warmUpDispatch() }
    var limit = rlimit(rlim_cur: 256, rlim_max: 256)
    guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { fail("setrlimit: \(errno)") }
    var taken: [Int32] = []
    while case let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC), descriptor >= 0 { taken.append(descriptor) }
    return taken
}

/// Closes the descriptors ``takeEveryDescriptor()`` took.
func freeDescriptors(_ taken: [Int32]) {
    for descriptor in taken { close(descriptor) }
}

/// Schedules Dispatch timers until Dispatch holds the descriptors it opens on first use and keeps: its
/// epoll instance, its eventfd and the timerfd of the clock `DispatchTime` counts on. Without them a timer
/// scheduled while no descriptor is left never fires (`timerfd_create` fails, and Dispatch drops the
/// timer), or Dispatch stops the process with SIGILL (`epoll_create1` fails). One short timer is not
/// enough: on a loaded machine its deadline has often passed when Dispatch looks at it, and it runs
/// without opening either. Waits on what `/proc/self/fd` shows, never on a time.
func warmUpDispatch() {
    var delay = 1
    while !dispatchHoldsItsDescriptors() {
        let fired = DispatchSemaphore(value: 0)
        DispatchQueue(label: "warm-up").asyncAfter(deadline: .now() + .milliseconds(delay)) { fired.signal() }
        fired.wait()
        delay = min(delay * 2, 100)  // a later deadline is likelier still ahead when Dispatch arms it
    }
}

/// Whether this process has an epoll instance, an eventfd and a timerfd open (`/proc/self/fd`).
private func dispatchHoldsItsDescriptors() -> Bool {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    let targets = Set(
        names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) })
    return ["anon_inode:[eventpoll]", "anon_inode:[eventfd]", "anon_inode:[timerfd]"].allSatisfy(targets.contains)
}
