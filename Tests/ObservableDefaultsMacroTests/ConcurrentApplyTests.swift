@testable import ObservableDefaults
import Dispatch
import Foundation
import Synchronization
import Testing

/// What `willSet`/`didSet` of a property told, in order: each announced change as (new value, old value).
final class AnnouncedChanges: Sendable {
    private let state = Mutex<(changes: [(new: Int, old: Int)], pendingNew: [Int])>(([], []))

    func willSet(_ newValue: Int) { state.withLock { $0.pendingNew.append(newValue) } }

    func didSet(_ oldValue: Int) {
        state.withLock { state in
            // Announcements of one property never overlap once applying is one thread at a time; if two do,
            // the pairing is off and so is the chain `check(from:)` follows.
            let new = state.pendingNew.isEmpty ? Int.min : state.pendingNew.removeFirst()
            state.changes.append((new, oldValue))
        }
    }

    var changes: [(new: Int, old: Int)] { state.withLock { $0.changes } }
}

/// A non-isolated class: changes of its keys are applied on the thread that delivers them. Its `willSet`
/// takes a while and gives up the processor (as one that logs to a file does), so a second delivery gets to
/// run in the middle of an apply even when both threads share one core.
@ObservableDefaults(limitToInstance: true)
final class RacedValue: Sendable {
    @Ignore let announced = AnnouncedChanges()
    var value = 0 {
        willSet {
            usleep(100)
            announced.willSet(newValue)
        }
        didSet { announced.didSet(oldValue) }
    }
}

/// Two threads applying changes of one key to one object at once: the suite delivers a change on the thread
/// that made it, so two threads setting the key deliver to the object together. Both appliers compare the
/// copy with the suite and store the new copy in two steps around `willSet`; without one applier at a time
/// both found the copy different and both announced the same change.
@Suite struct ConcurrentApplyTests {
    static let rounds = 400

    /// Every announced change is a distinct change of the copy, told once: the changes form a chain from the
    /// value before (each old value is the previous new value, and differs from its new value), Observation
    /// heard exactly as many, and the copy ends at what the suite holds.
    @Test func twoDeliveriesAnnounceEachChangeOnce() throws {
        let suite = try makeSuite()
        let model = RacedValue(userDefaults: suite)
        let notifications = MutationCounter { _ = model.value }
        var broken: [String] = []
        var seen = 0, value = 0, heard = 0
        for round in 1...Self.rounds {
            guard Self.setAtOnce(suite, key: "value", values: [2 * round, 2 * round + 1]) else {
                // Seen without one applier at a time: two announcements at once, each re-arming the counter's
                // tracking, kept Observation busy for good.
                broken.append("round \(round): the two threads did not return within 10 s")
                break
            }
            let changes = model.announced.changes
            let new = changes[seen...]
            seen = changes.count
            var chain = value
            var fine = !new.isEmpty
            for change in new {
                if change.old != chain || change.new == change.old { fine = false }
                chain = change.new
            }
            let stored = suite.storedValue(forKey: "value")
            if stored != .integer(model.value) || chain != model.value { fine = false }
            heard += new.count
            if notifications.count != heard { fine = false }
            if !fine {
                broken.append(
                    "round \(round): from \(value), told \(new.map { "\($0.old)->\($0.new)" }), "
                        + "copy \(model.value), suite \(String(describing: stored)), Observation \(notifications.count - heard + new.count)"
                )
            }
            heard = notifications.count
            value = model.value
        }
        #expect(broken.isEmpty, "\(broken.count) of \(Self.rounds) rounds: \(broken.prefix(5))")
    }

    /// Sets `key` to each of `values` on its own thread, all released at once; returns when all are done
    /// (`true`), or `false` after 10 s.
    static func setAtOnce(_ suite: DefaultsSuite, key: String, values: [Int]) -> Bool {
        let ready = StartLine()
        let group = DispatchGroup()
        for value in values {
            group.enter()
            Thread {
                ready.arrive(waitingFor: values.count)
                suite.set(value, forKey: key)
                group.leave()
            }.start()
        }
        return group.wait(timeout: .now() + 10) == .success
    }
}

/// Releases threads together: each arrives and spins until all have.
final class StartLine: Sendable {
    private let arrived = Atomic(0)

    func arrive(waitingFor count: Int) {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while arrived.load(ordering: .acquiring) < count {}
    }
}
