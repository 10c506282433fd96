import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Leaves this process without a free file descriptor: lowers its own limit to 256 first (so the machine's
/// file table, and every other test, is left alone), then opens `/dev/null` until `open` fails. Dispatch is
/// used once before, while descriptors are left: it opens its event descriptors on first use. Returns the
/// descriptors taken, for ``freeDescriptors(_:)``.
func takeEveryDescriptor() -> [Int32] {
    let warm = DispatchSemaphore(value: 0)
    DispatchQueue(label: "warm-up").asyncAfter(deadline: .now() + .milliseconds(1)) { warm.signal() }
    warm.wait()
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
