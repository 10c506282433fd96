import Foundation
import Testing
@testable import ObservableDefaults

/// A callback behind a lock stays the function it was: calling it the thousandth time goes through as many
/// frames as the first (a function kept as a generic container's own value gained two per access).
struct LockedCallbackTests {
    /// The stack depth inside `callback` on each of `calls` calls made through `callThrough`.
    static func depths(calls: Int, _ install: (@escaping @Sendable (Int) -> Void) -> Void, callThrough: (Int) -> Void)
        -> [Int]
    {
        let depths = Locked<[Int]>([])
        install { _ in
            let depth = Thread.callStackReturnAddresses.count
            depths.withLock { $0.append(depth) }
        }
        for index in 0..<calls { callThrough(index) }
        return depths.withLock { $0 }
    }

    @Test func aCallbackCalledAThousandTimesIsAsDeepAsOnTheFirstCall() {
        let callback = LockedCallback<Int>()
        let depths = Self.depths(calls: 1_000, { callback.set($0) }, callThrough: { callback.current?($0) })
        #expect(depths.count == 1_000)
        #expect(Set(depths).count == 1, "depths from \(depths.first ?? 0) to \(depths.last ?? 0)")
    }

    @Test func setReplacesTakeRemovesOnce() {
        let heard = Locked<[String]>([])
        let callback = LockedCallback<String> { value in heard.withLock { $0.append("first \(value)") } }
        #expect(!callback.isEmpty)
        callback.current?("a")
        callback.set { value in heard.withLock { $0.append("second \(value)") } }
        callback.current?("b")
        let taken = callback.take()
        #expect(callback.isEmpty && callback.take() == nil && callback.current == nil)
        taken?("c")
        callback.set(nil)
        #expect(callback.isEmpty)
        #expect(heard.withLock { $0 } == ["first a", "second b", "second c"])
    }

    /// The store's `didChangeExternallyNotification` is posted through one: its observer is as deep in the
    /// stack after a thousand changes as after the first (it grew by two frames a change).
    @Test func theStoresNotificationIsPostedAtTheSameDepthAfterAThousandChanges() throws {
        let store = CloudKeyValueStore.development
        let key = "locked-callback-\(UInt32.random(in: 0 ... .max))"
        let depths = Locked<[Int]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: CloudKeyValueStore.didChangeExternallyNotification, object: store, queue: nil
        ) { notification in
            guard (notification.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String])?.contains(key) == true
            else { return }
            let depth = Thread.callStackReturnAddresses.count
            depths.withLock { $0.append(depth) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        for index in 0..<1_000 {
            try store.simulateExternalChange([key: .integer(index)])
            store.settle()
        }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 1_000)
        // Deliveries run on the delivery queue or on the caller; each path has its own constant depth.
        #expect(Set(seen).count <= 2, "depths from \(seen.min() ?? 0) to \(seen.max() ?? 0)")
        #expect((seen.max() ?? 0) - (seen.min() ?? 0) < 40)
    }
}
