import Foundation

/// The observer processes of the cloud group (group 9):
///
///     cloud-observer SUBJECT ENDPOINT NAMESPACE STATE_DIRECTORY
///                                    observe SUBJECT's key (see CloudSubjects.swift) at the etcd member
///                                    ENDPOINT; print "ready" once observing, then "arrived STAMP T" for each
///                                    stamp that reaches the observer (T: the monotonic clock when it did);
///                                    "error WHY" if it cannot start; for each input line "usage", the
///                                    process's CPU so far (ProcessUsage.line); exit at end of input
///
/// Profiling aid (run under `strace -f -tt` or `perf record`; not used by the group):
///
///     cloud-set-loop ENDPOINT NAMESPACE STATE_DIRECTORY COUNT PAUSE_MS [SUBJECT]
///                                    COUNT writes of a new stamp, PAUSE_MS apart (so each upload is on its
///                                    own), by SUBJECT's writing end (an id of CloudSubjects.swift; default
///                                    `store`: `CloudKeyValueStore.set`), e.g. to compare the CPU a write costs
///                                    the writer and the member (`perf stat`) with the floor's
enum CloudChildModes {
    static func run(_ arguments: [String]) -> Bool {
        if arguments.first == "cloud-set-loop", arguments.count == 6 || arguments.count == 7 {
            setLoop(Array(arguments.dropFirst()))
            return true
        }
        guard arguments.first == "cloud-observer", arguments.count == 5 else { return false }
        guard let subject = CloudSubjects.named(arguments[1]) else {
            fail("cloud-observer: unknown subject \(arguments[1])")
        }
        guard let endpoint = URL(string: arguments[2]), endpoint.host != nil else {
            fail("cloud-observer: \(arguments[2]) is not a URL")
        }
        let place = CloudPlace(
            endpoint: endpoint, namespace: arguments[3], stateDirectory: URL(fileURLWithPath: arguments[4]))
        let observer: AnyObject
        do {
            observer = try subject.observe(place) { stamp in
                let now = monotonicNanoseconds()
                emit("arrived \(stamp) \(now)")
            }
        } catch {
            emit("error \(error)")
            exit(1)
        }
        emit("ready")
        while let line = readLine() {
            if line == "usage" { emit(ProcessUsage.current().line) }
        }
        withExtendedLifetime(observer) {}
        return true
    }

    private static func setLoop(_ arguments: [String]) {
        guard let endpoint = URL(string: arguments[0]), let count = Int(arguments[3]), let pause = Int(arguments[4])
        else {
            fail("cloud-set-loop: expected ENDPOINT NAMESPACE STATE_DIRECTORY COUNT PAUSE_MS [SUBJECT]")
        }
        let id = arguments.count > 5 ? arguments[5] : CloudSubjects.store.id
        guard let subject = CloudSubjects.named(id) else { fail("cloud-set-loop: unknown subject \(id)") }
        let place = CloudPlace(
            endpoint: endpoint, namespace: arguments[1], stateDirectory: URL(fileURLWithPath: arguments[2]))
        do {
            let writer = try subject.writer(place)
            for _ in 0..<count {
                try writer.write(stamp: monotonicNanoseconds())
                sleepNanoseconds(pause * 1_000_000)
            }
        } catch {
            fail("cloud-set-loop: \(error)")
        }
    }
}
