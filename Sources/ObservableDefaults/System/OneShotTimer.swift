import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A one-shot kernel timer (`timer_create` with `SIGEV_THREAD`): ``arm(after:)`` and ``disarm()`` are one
/// system call each and wake no thread; when it expires, its work runs on a thread the C library starts for
/// it. It holds no file descriptor.
///
/// For a check that is armed and disarmed far more often than it is due (the HTTP/2 reader's relief, armed
/// for every change that comes alone): a scheduler thread woken to arm it, and again to find it was not
/// needed, cost an observing process a third of its CPU per change.
///
/// The work is found by the timer's number when it expires, so an expiry that races with the timer's end
/// finds nothing and does nothing.
final class OneShotTimer: Sendable {
    private static let works = Mutex<(next: UInt, byNumber: [UInt: @Sendable () -> Void])>((1, [:]))

    private let number: UInt
    // `timer_t` is a pointer-sized handle, written once in `init`.
    private nonisolated(unsafe) let timer: timer_t

    /// A timer that runs `work` when it expires; `nil` when the system gives no timer (the limit of pending
    /// signals reached, say).
    init?(_ work: @escaping @Sendable () -> Void) {
        let number = Self.works.withLock { works in
            defer { works.next &+= 1 }
            works.byNumber[works.next] = work
            return works.next
        }
        var event = sigevent()
        event.sigev_notify = Int32(SIGEV_THREAD)
        event.sigev_value.sival_ptr = UnsafeMutableRawPointer(bitPattern: number)
        event._sigev_un._sigev_thread._function = { value in
            let work = OneShotTimer.works.withLock { $0.byNumber[UInt(bitPattern: value.sival_ptr)] }
            work?()
        }
        var timer: timer_t?
        guard timer_create(CLOCK_MONOTONIC, &event, &timer) == 0, let timer else {
            _ = Self.works.withLock { $0.byNumber.removeValue(forKey: number) }
            return nil
        }
        self.number = number
        self.timer = timer
    }

    deinit {
        timer_delete(timer)
        _ = Self.works.withLock { $0.byNumber.removeValue(forKey: number) }
    }

    /// Sets the timer to expire once `delay` from now (replacing any earlier setting).
    func arm(after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        var setting = itimerspec()
        setting.it_value = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        if setting.it_value.tv_sec == 0 && setting.it_value.tv_nsec == 0 { setting.it_value.tv_nsec = 1 }
        timer_settime(timer, 0, &setting, nil)
    }

    /// Stops the timer from expiring (an expiry under way may still run its work).
    func disarm() {
        var setting = itimerspec()
        timer_settime(timer, 0, &setting, nil)
    }
}
