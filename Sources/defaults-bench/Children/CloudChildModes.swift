import Foundation

/// The observer processes of the cloud group (group 9):
///
///     cloud-observer SUBJECT ENDPOINT NAMESPACE STATE_DIRECTORY
///                                    observe SUBJECT's key (see CloudSubjects.swift) at the etcd member
///                                    ENDPOINT; print "ready" once observing, then "arrived STAMP T" for each
///                                    stamp that reaches the observer (T: the monotonic clock when it did);
///                                    "error WHY" if it cannot start; exit at end of input
enum CloudChildModes {
    static func run(_ arguments: [String]) -> Bool {
        guard arguments.first == "cloud-observer", arguments.count == 5 else { return false }
        guard let subject = CloudSubjects.named(arguments[1]) else { fail("cloud-observer: unknown subject \(arguments[1])") }
        guard let endpoint = URL(string: arguments[2]), endpoint.host != nil else { fail("cloud-observer: \(arguments[2]) is not a URL") }
        let place = CloudPlace(endpoint: endpoint, namespace: arguments[3], stateDirectory: URL(fileURLWithPath: arguments[4]))
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
        while readLine() != nil {}
        withExtendedLifetime(observer) {}
        return true
    }
}
