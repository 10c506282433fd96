import Dispatch
import Foundation

/// The connection a watch channel's stream goes over (an ``HTTP2Connection``): it opens exchanges, and tells
/// whether its member sent anything since a given read count.
protocol EtcdWatchCarrier: HTTP2ExchangeOpening, AnyObject {
    /// How many times something was read from the member so far.
    var readCount: Int { get }
    /// Whether the member sent anything since the read count was `reads`.
    func heardFrom(since reads: Int) -> Bool
}

extension HTTP2Connection: EtcdWatchCarrier {}

/// The Watch streams a connection set's watches share (``EtcdGRPCConnections``): one per member connection,
/// etcd user (the token the stream was opened with) and message limit, each watch a watch ID on it
/// (``EtcdGRPCWatchChannel``), as etcd's Go client keeps one Watch stream for a client's watches. A member
/// then holds one stream for a process's stores, not one per store.
final class EtcdGRPCWatchChannels: Sendable {
    /// What the watches sharing a stream have in common.
    struct Key: Hashable, Sendable {
        let endpoint: URL
        let token: String?
        let answerBytes: Int
    }

    private let channels = Locked<[Key: EtcdGRPCWatchChannel]>([:])
    /// How long a new watch waits for the answer being handed to the watch alone on a stream (on the thread
    /// that reads the connection) before it takes a stream of its own: a hand-over that ends sooner was an
    /// observer at work, one that lasts longer an observer that blocks.
    let handOverPatience: Duration

    /// `handOverPatience`: see the property.
    init(handOverPatience: Duration = .milliseconds(500)) {
        self.handOverPatience = handOverPatience
    }

    /// A place on the channel of `key` on `connection`: the one open (or being opened) there, or a new one,
    /// which the caller is to open (`opens`, ``EtcdGRPCWatchChannel/open(token:limits:)``). While the open
    /// one hands an answer to its one watch on the reading thread, waits up to ``handOverPatience`` for that
    /// to end.
    func join(_ key: Key, on connection: any EtcdWatchCarrier) -> (channel: EtcdGRPCWatchChannel, opens: Bool) {
        let giveUp = ContinuousClock.now + handOverPatience
        while true {
            let (joined, busy) = channels.withLock {
                channels -> ((EtcdGRPCWatchChannel, Bool)?, EtcdGRPCWatchChannel?) in
                if let channel = channels[key], channel.connection === connection {
                    switch channel.admit() {
                    case .admitted: return ((channel, false), nil)
                    case .handingOver where ContinuousClock.now < giveUp: return (nil, channel)
                    case .handingOver, .closed: break
                    }
                }
                let channel = EtcdGRPCWatchChannel(key: key, connection: connection, owner: self)
                _ = channel.admit()
                channels[key] = channel
                return ((channel, true), nil)
            }
            if let joined { return joined }
            busy?.awaitHandOver(until: giveUp)
        }
    }

    /// Forgets `channel` (it ended, or its last watch left) if it is still the one kept for its key.
    fileprivate func forget(_ channel: EtcdGRPCWatchChannel) {
        channels.withLock { channels in
            if channels[channel.key] === channel { channels[channel.key] = nil }
        }
    }
}

/// One gRPC Watch stream carrying many watches, each with the watch ID its `created` answer names.
///
/// Creates go one at a time, each after the previous one's `created` answer, as clientv3 sends them: the
/// answer is how a watch learns its ID, and through `etcd grpc-proxy` answers need not come in the order of
/// the requests. Every message is sent by a watch's own thread (its create; its cancel when it ends, with the
/// cancels of watches whose thread left before their ID came), never by the thread that reads the connection:
/// that one must not wait for the send window that only it can reopen. The stream is reset when its last
/// watch leaves; when it ends otherwise, every watch on it ends with it.
///
/// Answers go to each watch's inbox. While a watch is alone on the stream, the thread that reads the
/// connection hands them to it at once (no thread hop between the socket and the store); with others on the
/// stream, the watch's own thread does, so that a store whose observer blocks stalls no other store's watch
/// (a watch that comes while an answer is handed over that way waits for the hand-over to end, and takes a
/// new stream if it lasts longer than ``EtcdGRPCWatchChannels/handOverPatience``).
/// An inbox holds at most ``inboxBytes`` (one answer always fits): a watch that falls
/// further behind is cancelled and ends ``Outcome/fellBehind``, to be watched again from its last revision
/// (etcd keeps the history; nothing is lost, and nothing piles up in memory).
final class EtcdGRPCWatchChannel: @unchecked Sendable {  // `state` and the watchers' fields: under `state`'s lock
    /// How many bytes of answers (keys and values) an inbox holds at most.
    static let inboxBytes = 1 << 20

    /// One watch on the channel. Its fields are read and written under the channel's lock.
    final class Watcher: @unchecked Sendable {
        fileprivate let wake = DispatchSemaphore(value: 0)
        fileprivate var receive: ((EtcdProto.WatchResponse) -> Bool)?
        fileprivate var id: Int64?
        /// Its `created` answer came (with an ID, or refusing the watch).
        fileprivate var answered = false
        /// Answers not yet handed to it.
        fileprivate var inbox = WatchInbox()
        /// A thread is handing it answers (its own, or the one that reads the connection).
        fileprivate var draining = false
        /// Its `receive` returned false, it was stopped, or it fell behind: nothing more is handed to it.
        fileprivate var stopped = false
        fileprivate var fellBehind = false
        fileprivate var cancelledByServer = false

        fileprivate init(receive: @escaping (EtcdProto.WatchResponse) -> Bool) { self.receive = receive }
    }

    /// How one watch on the channel ended.
    enum Outcome: Sendable {
        /// Its `receive` returned false, or it was stopped.
        case stopped
        /// The stream ended with status OK.
        case closed
        /// The stream failed, or the watch got no `created` answer in time.
        case failed(GRPCFailure)
        /// Its inbox overflowed while it was busy: it was cancelled, and is to be watched again from its last
        /// revision.
        case fellBehind
    }

    private struct State {
        var stream: GRPCStream?
        var ended: Outcome?
        var admitted = 0
        var closed = false
        /// Answers are being handed to the watch alone on the stream, on the thread that reads the connection.
        var handingOverInline = false
        /// New watches waiting for that hand-over to end (``awaitHandOver(until:)``).
        var joinersWaiting = 0
        /// Waiting to send their create, in order.
        var waiting: [Watcher] = []
        /// Sent its create; its `created` answer is awaited (it may have left meanwhile: then the ID the
        /// answer names is an orphan's).
        var creating: Watcher?
        var watching: [Int64: Watcher] = [:]
        /// IDs of watches created for a watcher that had left: cancelled by the next watch that sends.
        var orphans: [Int64] = []

        /// Nothing more is handed to `watcher`.
        mutating func stop(_ watcher: Watcher) {
            watcher.stopped = true
            if let id = watcher.id, watching[id] === watcher { watching[id] = nil }
        }
    }

    fileprivate let key: EtcdGRPCWatchChannels.Key
    let connection: any EtcdWatchCarrier
    private weak var owner: EtcdGRPCWatchChannels?
    private let state = Locked(State())
    /// Held while a message is sent: one sender at a time on the stream.
    private let sending = NSLock()
    /// Broadcast when a hand-over on the reading thread ends while new watches wait for it; its lock is held
    /// by a waiting watch from its look at the state until it waits, so no broadcast falls between the two.
    private let handOverEnded = HTTP2Condition()

    fileprivate init(key: EtcdGRPCWatchChannels.Key, connection: any EtcdWatchCarrier, owner: EtcdGRPCWatchChannels) {
        self.key = key
        self.connection = connection
        self.owner = owner
    }

    /// Whether a new watch was let onto the channel (``admit()``).
    fileprivate enum Admission {
        case admitted
        /// Not now: an answer is being handed to the watch alone on the stream, on the thread that reads the
        /// connection (that watch's observer may block, and a new watch's answers would wait for it).
        case handingOver
        /// Never: the channel ended or closed.
        case closed
    }

    /// Counts one more watch in, unless the channel ended or closed, or is handing answers to the watch alone
    /// on it on the reading thread.
    fileprivate func admit() -> Admission {
        state.withLock { state in
            guard !state.closed, state.ended == nil else { return .closed }
            guard !state.handingOverInline else { return .handingOver }
            state.admitted += 1
            return .admitted
        }
    }

    /// Waits until no answer is being handed over on the reading thread, or `deadline` passed.
    fileprivate func awaitHandOver(until deadline: ContinuousClock.Instant) {
        handOverEnded.lock()
        defer { handOverEnded.unlock() }
        state.withLock { $0.joinersWaiting += 1 }
        defer { state.withLock { $0.joinersWaiting -= 1 } }
        while state.withLock({ $0.handingOverInline }) {
            let left = ContinuousClock.now.duration(to: deadline).timeInterval
            guard left > 0 else { return }
            handOverEnded.wait(until: Date(timeIntervalSinceNow: left))
        }
    }

    /// Opens the stream (sending `token`) and starts the thread that consumes it; on failure the channel ends
    /// with it, and so does every watch waiting on it.
    func open(token: String?, limits: EtcdReadLimits) {
        let stream: GRPCStream
        do throws(GRPCFailure) {
            // No deadline: a watch may stay quiet indefinitely (each watch's head deadline bounds its create).
            stream = try GRPCStream.open(
                path: EtcdProto.WatchRequest.path, metadata: GRPCCall.etcdMetadata(token: token, requireLeader: true),
                deadline: nil, limits: limits, on: connection)
        } catch {
            end(.failed(error))
            return
        }
        let first = state.withLock { state -> Watcher? in
            state.stream = stream
            return state.waiting.first
        }
        first?.wake.signal()
        let thread = Thread { [self] in consume(stream) }
        thread.name = "ObservableDefaults.EtcdWatchChannel"
        thread.start()
    }

    private func consume(_ stream: GRPCStream) {
        do throws(GRPCFailure) {
            if try stream.consume(EtcdProto.WatchResponse.self, { [self] in route($0) }) { end(.closed) }
        } catch {
            end(.failed(error))
        }
    }

    /// Runs one watch (`create`) on the channel until its `receive` returns false, the function `register`
    /// is given is called, or the channel ends: waits for its turn, sends `create`, and has every answer for
    /// its ID handed to `receive`, the `created` one first (on the thread that reads the connection while the
    /// watch is alone on the stream, else on the calling thread). Its
    /// `created` answer must come by `headTimeout` seconds from now (waited for again, up to ten times, while
    /// the member sends anything on the connection: on a stream shared by many watches the answer may queue
    /// behind the others'). Then cancels the watch on the stream, or resets the stream if it was the last.
    func watch(
        _ create: EtcdProto.WatchCreateRequest, headTimeout: TimeInterval,
        register: (@escaping @Sendable () -> Void) -> Void,
        receive: @escaping (EtcdProto.WatchResponse) -> Bool
    ) -> Outcome {
        let watcher = Watcher(receive: receive)
        register { [self] in stop(watcher) }
        var deadline: HeadDeadline? = HeadDeadline(timeout: headTimeout, connection: connection)
        state.withLock { $0.waiting.append(watcher) }
        var orphans: [Int64] = []
        let turn = wait(watcher, deadline: &deadline) { state in
            guard state.stream != nil, state.creating == nil, state.waiting.first === watcher else { return false }
            state.waiting.removeFirst()
            state.creating = watcher
            swap(&orphans, &state.orphans)
            return true
        }
        if let turn { return leave(watcher, outcome: turn) }
        let sendBy = deadline?.instant ?? .now
        if let failure = cancel(orphans, by: sendBy) { return leave(watcher, outcome: .failed(failure)) }
        if let failure = send(.create(create), deadline: sendBy) {
            return leave(watcher, outcome: .failed(failure))
        }
        if let outcome = wait(watcher, deadline: &deadline, until: { _ in watcher.answered }) {
            return leave(watcher, outcome: outcome)
        }
        var forever: HeadDeadline?
        while true {
            let ready = wait(watcher, deadline: &forever) { _ in
                guard !watcher.draining, !watcher.inbox.isEmpty else { return false }
                watcher.draining = true
                return true
            }
            if let outcome = ready { return leave(watcher, outcome: outcome) }
            drain(watcher)
        }
    }

    /// Stops `watcher`: nothing more is handed to it, and its thread leaves the channel.
    private func stop(_ watcher: Watcher) {
        state.withLock { $0.stop(watcher) }
        watcher.wake.signal()
    }

    /// Waits until `ready` holds (checked under the lock: `nil` then), `watcher` is stopped or the channel
    /// ended (`.stopped`, or how it ended), or `deadline` passed (`.failed`, timed out; `nil`: no deadline).
    private func wait(_ watcher: Watcher, deadline: inout HeadDeadline?, until ready: (inout State) -> Bool)
        -> Outcome?
    {
        while true {
            let outcome = state.withLock { state -> Outcome?? in
                if let ended = state.ended { return .some(ended) }
                if watcher.stopped { return .some(watcher.fellBehind ? .fellBehind : .stopped) }
                return ready(&state) ? .some(nil) : nil
            }
            if let outcome { return outcome }
            guard let instant = deadline?.instant else {
                watcher.wake.wait()
                continue
            }
            let left = ContinuousClock.now.duration(to: instant).timeInterval
            if left > 0, watcher.wake.wait(timeout: .now() + left) == .success { continue }
            if deadline?.extend() == true { continue }
            var failure = EtcdHTTP.Failure("no answer to the watch's create request")
            failure.timedOut = true
            return .failed(.transport(failure))
        }
    }

    /// Takes `watcher` off the channel once no answer is being handed to it, and cancels its watch on the
    /// stream (with any orphans'), or resets the stream if it was the last watch; returns `outcome`.
    private func leave(_ watcher: Watcher, outcome: Outcome) -> Outcome {
        stop(watcher)
        while state.withLock({ _ in watcher.draining }) { watcher.wake.wait() }
        let (cancels, reset, next) = state.withLock {
            state -> (cancels: [Int64], reset: GRPCStream?, next: Watcher?) in
            watcher.receive = nil
            watcher.inbox = WatchInbox()
            state.waiting.removeAll { $0 === watcher }
            state.admitted -= 1
            let next = state.creating == nil ? state.waiting.first : nil
            if state.admitted == 0 {
                state.closed = true
                return ([], state.stream, nil)
            }
            guard state.ended == nil else { return ([], nil, nil) }
            var cancels = state.orphans
            state.orphans = []
            if let id = watcher.id, !watcher.cancelledByServer { cancels.append(id) }
            return (cancels, nil, next)
        }
        next?.wake.signal()
        if let reset {
            owner?.forget(self)
            reset.cancel()
        }
        _ = cancel(cancels, by: ContinuousClock.now.advanced(by: .seconds(3)))
        return outcome
    }

    /// Cancels the watches `ids` on the stream, up to the first send that fails (it ended the channel:
    /// returned).
    private func cancel(_ ids: [Int64], by deadline: ContinuousClock.Instant) -> GRPCFailure? {
        for id in ids {
            if let failure = send(.cancel(EtcdProto.WatchCancelRequest(watchID: id)), deadline: deadline) {
                return failure
            }
        }
        return nil
    }

    /// Sends one request on the stream; a failure ends the channel (the stream cannot be written any more).
    private func send(_ request: EtcdProto.WatchRequest.Request, deadline: ContinuousClock.Instant) -> GRPCFailure? {
        guard let stream = state.withLock({ $0.stream }) else { return nil }
        sending.lock()
        defer { sending.unlock() }
        do throws(GRPCFailure) {
            try stream.send(EtcdProto.WatchRequest(request), deadline: deadline)
            return nil
        } catch {
            end(.failed(error))
            return error
        }
    }

    /// Ends the channel (once): every watch on it ends with `outcome`.
    private func end(_ outcome: Outcome) {
        let watchers = state.withLock { state -> [Watcher] in
            guard state.ended == nil else { return [] }
            state.ended = outcome
            return state.waiting + (state.creating.map { [$0] } ?? []) + Array(state.watching.values)
        }
        owner?.forget(self)
        for watcher in watchers { watcher.wake.signal() }
    }

    /// Hands one answer to its watch at once, on the thread that reads the connection, when the watch is alone
    /// on the stream, idle and has nothing older waiting; else puts it in the watch's inbox and wakes the
    /// watch's thread. False once the channel closed (nothing more is read).
    private func route(_ answer: EtcdProto.WatchResponse) -> Bool {
        var response = answer
        var target: Watcher?
        var next: Watcher?
        var inline = false
        let goesOn = state.withLock { state -> Bool in
            if state.closed || state.ended != nil { return false }
            if response.created {
                guard let creating = state.creating else {
                    // Unasked: every create waits for the previous one's answer. Nothing to give it to.
                    if response.watchID >= 0, !response.canceled { state.orphans.append(response.watchID) }
                    return true
                }
                state.creating = nil
                next = state.waiting.first
                let refused = response.canceled || response.watchID < 0
                if creating.stopped {
                    if !refused { state.orphans.append(response.watchID) }
                    return true
                }
                creating.answered = true
                if !refused {
                    creating.id = response.watchID
                    state.watching[response.watchID] = creating
                } else if !response.canceled {
                    // No watch made, yet not said to be cancelled: the watch ends all the same, saying so.
                    var refusal = response
                    refusal.canceled = true
                    refusal.cancelReason = "the member created no watch (watch ID \(response.watchID))"
                    response = refusal
                }
                target = creating
            } else {
                guard let watcher = state.watching[response.watchID] else { return true }  // an orphan's, or gone
                if response.canceled {
                    state.watching[response.watchID] = nil
                    watcher.cancelledByServer = true
                }
                target = watcher
            }
            guard let watcher = target else { return true }
            // Alone and idle, with nothing older waiting: handed over here, now.
            if !watcher.draining, watcher.inbox.isEmpty, state.admitted == 1 {
                watcher.draining = true
                state.handingOverInline = true
                inline = true
                return true
            }
            if !watcher.inbox.add(response) {
                watcher.fellBehind = true
                state.stop(watcher)
                watcher.inbox = WatchInbox()
            }
            return true
        }
        next?.wake.signal()
        guard let target else { return goesOn }
        if inline {
            let goesOn = call(target, with: response)
            let (wake, joiners) = state.withLock { state in
                target.draining = false
                state.handingOverInline = false
                if !goesOn { state.stop(target) }
                // Its thread waits for nothing else here: its `created` answer, or the end of this hand-over.
                return (target.stopped || response.created, state.joinersWaiting > 0)
            }
            if wake { target.wake.signal() }
            if joiners {
                handOverEnded.lock()
                handOverEnded.broadcast()
                handOverEnded.unlock()
            }
        } else {
            target.wake.signal()
        }
        return goesOn
    }

    /// Hands `watcher` the answers in its inbox, on its own thread (which set its `draining`), until it is
    /// empty or the watch stopped; then clears `draining`.
    private func drain(_ watcher: Watcher) {
        while let batch = state.withLock({ state -> [EtcdProto.WatchResponse]? in
            guard !watcher.stopped, !watcher.inbox.isEmpty else {
                watcher.draining = false
                return nil
            }
            return watcher.inbox.takeAll()
        }) {
            for response in batch where !call(watcher, with: response) {
                state.withLock { $0.stop(watcher) }
                break
            }
        }
    }

    /// `watcher`'s `receive` called with `response`, unless it stopped meanwhile (a function of its own, so
    /// the closure is released when it returns: the watch's thread may be waiting to let go of it).
    @inline(never)
    private func call(_ watcher: Watcher, with response: EtcdProto.WatchResponse) -> Bool {
        guard let receive = state.withLock({ _ in watcher.stopped ? nil : watcher.receive }) else { return false }
        return receive(response)
    }
}

/// The answers waiting for one watch, and about how much memory they hold (keys and values, and a little for
/// the rest), at most ``EtcdGRPCWatchChannel/inboxBytes``.
private struct WatchInbox {
    private var answers: [EtcdProto.WatchResponse] = []
    private var bytes = 0

    var isEmpty: Bool { answers.isEmpty }

    /// Adds `response`, unless that would hold more than the limit with an answer in already (one answer
    /// always fits): false then, and nothing is added.
    mutating func add(_ response: EtcdProto.WatchResponse) -> Bool {
        let size = response.events.reduce(64) { $0 + 32 + ($1.kv.map { $0.key.count + $0.value.count } ?? 0) }
        guard answers.isEmpty || bytes + size <= EtcdGRPCWatchChannel.inboxBytes else { return false }
        answers.append(response)
        bytes += size
        return true
    }

    /// Every answer in it, in order, taken out.
    mutating func takeAll() -> [EtcdProto.WatchResponse] {
        defer { self = WatchInbox() }
        return answers
    }
}

/// How long a watch waits for its `created` answer: `timeout` seconds, again (ten times at most) while the
/// member sent anything on the connection since the last wait began (it is busy, not hung; the probe's
/// PINGs find a hung one).
private struct HeadDeadline {
    private(set) var instant: ContinuousClock.Instant
    private let timeout: TimeInterval
    private let connection: any EtcdWatchCarrier
    private var heardAt: Int
    private var extensions = 0

    init(timeout: TimeInterval, connection: any EtcdWatchCarrier) {
        self.timeout = timeout
        self.connection = connection
        instant = EtcdHTTP.deadline(after: timeout)
        heardAt = connection.readCount
    }

    /// Waits a timeout more if the member sent anything since; whether it does.
    mutating func extend() -> Bool {
        guard extensions < 10, connection.heardFrom(since: heardAt) else { return false }
        extensions += 1
        heardAt = connection.readCount
        instant = EtcdHTTP.deadline(after: timeout)
        return true
    }
}
