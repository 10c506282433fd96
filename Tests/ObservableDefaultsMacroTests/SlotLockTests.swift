import Dispatch
import Foundation
import Synchronization
import Testing
@testable import ObservableDefaults

/// `_DefaultsLocked`, the lock of every property's copy: exclusive under contention, and a thread that
/// finds it taken gets it once the holder gives it back, however long the holder keeps it.
@Suite struct SlotLockTests {
    /// Threads incrementing one value under the lock lose no increment (a broken lock loses many).
    @Test func contendedIncrementsAreNeverLost() {
        let lock = _DefaultsLocked(0)
        let threads = 4, increments = 200_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments { lock.withLock { $0 += 1 } }
        }
        #expect(lock.value == threads * increments)
    }

    /// Values bigger than a word are never seen half written: a reader under the lock finds both halves equal.
    @Test func aReaderNeverSeesAHalfWrittenValue() {
        let lock = _DefaultsLocked((first: "0", second: "0"))
        let torn = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            for index in 0..<100_000 {
                if thread == 0 {
                    let text = String(repeating: "x", count: index % 40)
                    lock.withLock { $0 = (text, text) }
                } else {
                    let pair = lock.value
                    if pair.first != pair.second { torn.withLock { $0 += 1 } }
                }
            }
        }
        #expect(torn.withLock { $0 } == 0)
    }

    /// A holder that keeps the lock for a long time (as a preempted one does) makes a waiter wait past
    /// its spinning and yielding into its naps; the waiter gets the lock once it is given back, and sees
    /// what the holder wrote. (Threads of their own: a dispatch queue may not start the waiter while the
    /// holder sleeps.)
    @Test func aWaiterGetsTheLockAfterALongHold() {
        let lock = _DefaultsLocked(0)
        let held = DispatchSemaphore(value: 0)
        let trying = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let seen = Mutex<Int?>(nil)
        Thread {
            lock.withLock { value in
                held.signal()
                // The waiter is about to ask for the lock: the hold lasts well past its spinning.
                _ = trying.wait(timeout: .now() + 10)
                usleep(200_000)
                value = 1
            }
        }.start()
        held.wait()
        Thread {
            trying.signal()
            let value = lock.withLock { $0 }
            seen.withLock { $0 = value }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 10) == .success, "the waiter never got the lock")
        let value = seen.withLock { $0 }
        #expect(value == 1, "the waiter read \(String(describing: value)) before the holder gave the lock back")
    }
}
