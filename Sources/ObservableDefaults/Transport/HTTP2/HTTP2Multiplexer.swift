import Foundation
import Synchronization

/// One stream's state, shared by its exchange and the connection's reader thread; every field is guarded by
/// the ``HTTP2Multiplexer``'s lock (its condition's mutex).
final class HTTP2StreamState: @unchecked Sendable {
    /// The stream identifier (odd: the client opened it).
    let id: UInt32
    /// What arrived and the caller has not taken yet (at most one stream window of data).
    var inbox: [HTTP2Received] = []
    /// The first item of ``inbox`` not yet taken.
    var inboxStart = 0
    /// How much more the member may send before it waits for the client's WINDOW_UPDATE.
    var receiveWindow: Int
    /// Data taken by the caller (or padding) since the last WINDOW_UPDATE.
    var ungranted = 0
    /// How much the client may still send (the member's stream window; may be negative after a SETTINGS).
    var sendWindow: Int
    /// A final (non-1xx) head arrived.
    var headReceived = false
    /// How many informational (1xx) heads arrived.
    var informationalHeads = 0
    /// The member sent END_STREAM.
    var remoteEnded = false
    /// The client sent END_STREAM.
    var localEnded = false
    /// Why the stream failed; delivered after what arrived before it.
    var failure: EtcdHTTP.Failure?
    /// Still counted among the open streams (in the multiplexer's table).
    var open = true
    /// Takes what arrives, on the thread that reads the connection, instead of a caller of
    /// ``HTTP2Multiplexer/receive(on:deadline:)`` (see ``HTTP2Multiplexer/consume(_:with:)``); returns false
    /// once it wants nothing more.
    var consumer: ((HTTP2Received) -> Bool)?
    /// A thread is running ``consumer`` now: what arrives meanwhile waits in the inbox, for that thread.
    var consuming = false
    /// ``consumer`` returned false.
    var consumerFinished = false
    /// What the stream's reader waits on (sharing the multiplexer's lock), made when one first waits: what
    /// arrives for this stream wakes its reader alone.
    var arrival: HTTP2Condition?

    /// A new stream `id` with its initial windows.
    init(id: UInt32, receiveWindow: Int, sendWindow: Int) {
        self.id = id
        self.receiveWindow = receiveWindow
        self.sendWindow = sendWindow
    }

    /// Whether something arrived that the caller has not taken.
    var hasReceived: Bool { inboxStart < inbox.count }

    /// Takes the oldest item of the inbox (there must be one).
    func take() -> HTTP2Received {
        let item = inbox[inboxStart]
        inboxStart += 1
        if inboxStart == inbox.count {
            inbox.removeAll(keepingCapacity: true)
            inboxStart = 0
        }
        return item
    }
}

/// The shared state of an ``HTTP2Connection`` and its reader thread: the streams, both directions' flow
/// control, the member's settings, GOAWAY and pings. Guarded by one lock; a stream's reader waits on its
/// stream's own condition (``HTTP2StreamState/arrival``), woken only by what concerns that stream, so a
/// thousand watches on one connection do not all wake for every frame; the connection-level waits (a free
/// stream slot, a send window, the member's SETTINGS, a PING's ACK) wait on the connection's condition,
/// broadcast when one of those changes. The socket is written outside the lock.
///
/// A stream may have a consumer (``consume(_:with:)``, an etcd watch): what arrives on it is handed over on the
/// reader thread itself, with no hand-off to another thread. Meanwhile the reader thread reads nothing; so that
/// a consumer may take its time or call anything — even code that waits for an answer on this connection (an
/// observer that calls `synchronize()`) — and the other streams of the connection (other stores' watches) go
/// on, consumers that keep the reader for more than ``reliefDelay`` get a new reader thread started, which
/// goes on reading where the other stopped; the other stops reading once its consumer returns. The check is a
/// kernel timer (``OneShotTimer``) armed when the reader is lent and disarmed when the consumers return: a
/// change that comes alone wakes no other thread.
final class HTTP2Multiplexer: @unchecked Sendable {  // mutable state only under `condition`
    /// The window the client grants each stream (SETTINGS_INITIAL_WINDOW_SIZE): an 8 MiB range answer
    /// flows without waiting for the caller on any ordinary link, and a slow consumer holds at most this.
    static let streamWindow = 1 << 20
    /// The window the client grants the connection, granted again as data arrives (stream windows bound what
    /// is kept).
    static let connectionWindow = 8 << 20
    /// The largest window HTTP/2 allows.
    static let maximumWindow = Int(Int32.max)

    private let socket: HTTP2Socket
    private let scheme: String
    private let authority: String
    /// What the connection reads at most.
    let limits: EtcdReadLimits

    private let condition = HTTP2Condition()
    private var streams: [UInt32: HTTP2StreamState] = [:]
    private var nextStreamID: UInt32 = 1
    private var encoder = HPACKEncoder()  // used under `writing`, in stream order
    private var peerMaximumStreams = Int.max
    private var peerInitialWindow = 65535
    private var peerMaximumFrameSize = HTTP2Frame.defaultMaximumSize
    private var connectionSendWindow = 65535
    private var connectionReceiveWindow = 65535
    private var settingsReceived = false
    private var goAwayLastStream: UInt32?
    /// Why the connection can carry nothing more (broken, closed, or a GOAWAY's reason).
    private var broken: EtcdHTTP.Failure?
    private var pings: [UInt64: Bool] = [:]
    private var nextPing: UInt64 = 1
    /// The member sent GOAWAY ENHANCE_YOUR_CALM 'too_many_pings': the client pinged more often than the
    /// member's keepalive policy allows.
    private var pingedTooOften = false
    /// The member wrote HEADERS or DATA since the client's last PING was acknowledged (so gRPC servers take
    /// the next PING as free, whatever their keepalive policy): counted from the ACK, not from sending, as a
    /// busy connection brings frames the member wrote before it took the PING (and with it the free pass
    /// those frames gave) after the PING went out — a second PING on their word is one too soon.
    private var wroteSinceLastPing = true
    /// How many reads brought bytes from the member (kept outside the lock: counted on every read).
    private let reads = Atomic<Int>(0)
    /// Serialises opening streams: IDs must go out in increasing order, with their header block in one piece.
    private let writing = NSLock()
    /// What reading keeps between reads, passed from a reader thread to the one relieving it.
    private var readerState: ReaderState
    /// Streams whose consumer has something to take, for the reader thread once its frame is handled.
    private var readyConsumers: [HTTP2StreamState] = []
    /// Since when the reader thread has been running consumers instead of reading (`nil`: it is reading).
    private var lentSince: ContinuousClock.Instant?
    /// The number of the reader thread that reads now; one whose number it no longer is stops reading.
    private var readerGeneration = 0
    /// How long consumers may keep the reader thread before another thread takes over reading: longer than
    /// a consumer's usual work, so that none is started needlessly.
    static let reliefDelay: Duration = .milliseconds(20)
    /// A relief check is pending (``armRelief(after:)``).
    private var reliefArmed = false
    /// The kernel timer of the relief check (``OneShotTimer``), disarmed when the consumers return; `nil`
    /// when the system gave none: the check is then scheduled on ``DelayedWork`` and left to find nothing.
    private var reliefTimer: OneShotTimer?
    /// How many times a stream's reader woke and found nothing for it (kept outside the lock).
    private let emptyWakeups = Atomic<Int>(0)

    /// A connection over `socket`, whose requests carry `scheme` and `authority` (`host:port`).
    init(socket: HTTP2Socket, scheme: String, authority: String, limits: EtcdReadLimits) {
        self.socket = socket
        self.scheme = scheme
        self.authority = authority
        self.limits = limits
        readerState = ReaderState(decoder: HPACKDecoder(maximumListSize: limits.headBytes))
        reliefTimer = OneShotTimer { [weak self] in self?.reliefDue() }
    }

    // MARK: Starting and ending

    /// Sends the preface and the client's SETTINGS, starts the reader thread, and waits for the member's
    /// SETTINGS until `deadline`.
    func start(deadline: ContinuousClock.Instant) throws(EtcdHTTP.Failure) {
        var bytes = HTTP2Frame.preface
        var settings: [UInt8] = []
        for (identifier, value) in [
            (UInt16(2), UInt32(0)),  // ENABLE_PUSH
            (4, UInt32(Self.streamWindow)),  // INITIAL_WINDOW_SIZE
            (6, UInt32(clamping: limits.headBytes))  // MAX_HEADER_LIST_SIZE
        ] {
            settings += [UInt8(identifier >> 8), UInt8(identifier & 0xFF)]
            HTTP2Frame.append32(value, to: &settings)
        }
        HTTP2Frame(type: HTTP2Frame.settings, stream: 0, payload: settings).append(to: &bytes)
        Self.windowUpdate(stream: 0, UInt32(Self.connectionWindow - 65535)).append(to: &bytes)
        locked { connectionReceiveWindow = Self.connectionWindow }
        do throws(EtcdHTTP.Failure) { try socket.write(bytes) } catch {
            socket.close()
            throw error
        }
        startReader(generation: 0)
        condition.lock()
        defer { condition.unlock() }
        while !settingsReceived, broken == nil {
            guard wait(until: deadline) else {
                var failure = EtcdHTTP.Failure(
                    "sent no HTTP/2 SETTINGS in time (an HTTP/2 server sends them at once; is this an etcd client port?)"
                )
                failure.timedOut = true
                breakConnection(failure)
                throw failure
            }
        }
        if let broken { throw broken }
    }

    /// Whether new streams can be opened (no GOAWAY, not broken or closed).
    var isUsable: Bool { locked { broken == nil && goAwayLastStream == nil } }

    /// Whether the member ended the connection because the client pinged too often (gRPC servers send
    /// GOAWAY ENHANCE_YOUR_CALM with 'too_many_pings').
    var wasPingedTooOften: Bool { locked { pingedTooOften } }

    /// Whether the member wrote HEADERS or DATA since the client's last PING: gRPC servers count a PING
    /// against their keepalive policy only when they wrote neither since the one before.
    var memberWroteSinceLastPing: Bool { locked { wroteSinceLastPing } }

    /// How many times bytes arrived from the member so far: a count that moved shows it answers.
    var readCount: Int { reads.load(ordering: .relaxed) }

    /// How many `write`s went to the socket so far.
    var writeCount: Int { socket.writeCount }

    /// Whether the member sent bytes after the read count was `reads` (``readCount``): they were read since,
    /// or they wait in the socket for the reader thread.
    func heardFrom(since reads: Int) -> Bool {
        readCount != reads || socket.hasUnreadBytes
    }

    /// How many times a stream's reader woke with nothing arrived for it and its stream neither ended nor
    /// failed (a timed wait's end aside): what a condition shared by every stream would cost per frame.
    var readerWakeupsWithNothing: Int { emptyWakeups.load(ordering: .relaxed) }

    /// Sends GOAWAY (once) and ends the connection: every open stream fails as not processed (unless
    /// it was sent or answered already), with `reason` after "the client closed the connection" when given.
    func close(reason: String? = nil) {
        var failure = EtcdHTTP.Failure("the client closed the connection" + (reason.map { ": \($0)" } ?? ""))
        failure.notProcessed = true
        if locked({ broken == nil }) { try? socket.write(Self.goAway(HTTP2ErrorCode.noError, lastStream: 0).encoded) }
        locked { breakConnection(failure) }
    }

    /// Marks the connection broken with `failure` and fails every open stream with it (under the lock).
    private func breakConnection(_ failure: EtcdHTTP.Failure) {
        if broken == nil { broken = failure }
        for stream in streams.values where stream.failure == nil {
            var failure = failure
            if stream.localEnded || stream.headReceived { failure.notProcessed = false }
            stream.failure = failure
            stream.open = false
            stream.arrival?.broadcast()
        }
        streams.removeAll()
        condition.broadcast()
        socket.shutDown()
    }

    /// Waits on the connection's condition until `deadline` (`nil`: no bound); false when it has passed.
    private func wait(until deadline: ContinuousClock.Instant?) -> Bool {
        wait(on: condition, until: deadline)
    }

    /// Waits on `condition` (the connection's or a stream's) until `deadline` (`nil`: no bound); false when
    /// it has passed.
    private func wait(on condition: HTTP2Condition, until deadline: ContinuousClock.Instant?) -> Bool {
        guard let deadline else {
            condition.wait()
            return true
        }
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return false }
        let seconds = left.timeInterval
        _ = condition.wait(until: Date(timeIntervalSinceNow: min(seconds, 1e9)))
        return true
    }

    // MARK: Streams

    /// Opens a stream: waits for a free one (the member's SETTINGS_MAX_CONCURRENT_STREAMS) until
    /// `deadline`, then sends the request's header block (HEADERS and, beyond the member's frame size,
    /// CONTINUATION). With a `body`, the request is that body and ends with it: when both send windows and the
    /// member's frame size take it whole (a unary gRPC call's request always does on a fresh stream), it goes
    /// as one DATA frame with END_STREAM in the same `write` as the header block, so the member reads the
    /// request in one piece; otherwise it is sent as ``send(_:on:endStream:deadline:)`` does.
    func openStream(
        path: String, headers: [HTTP2Header], body: [UInt8]? = nil, deadline: ContinuousClock.Instant?
    ) throws(EtcdHTTP.Failure) -> HTTP2StreamState {
        let (stream, bodySent) = try open(path: path, headers: headers, body: body, deadline: deadline)
        if let body, !bodySent {
            do throws(EtcdHTTP.Failure) { try send(body, on: stream, endStream: true, deadline: deadline) } catch {
                cancel(stream)
                throw error
            }
        }
        return stream
    }

    /// ``openStream(path:headers:body:deadline:)`` up to the first `write`; whether `body` went with it.
    private func open(path: String, headers: [HTTP2Header], body: [UInt8]?, deadline: ContinuousClock.Instant?)
        throws(EtcdHTTP.Failure) -> (HTTP2StreamState, bodySent: Bool)
    {
        var request = [
            HTTP2Header(":method", "POST"), HTTP2Header(":scheme", scheme), HTTP2Header(":path", path),
            HTTP2Header(":authority", authority)
        ]
        request += headers
        while true {
            try waitForFreeStream(deadline: deadline)
            writing.lock()
            defer { writing.unlock() }
            let opened = try locked { () throws(EtcdHTTP.Failure) -> (HTTP2StreamState, Int, Bool)? in
                if let failure = unusableFailure() { throw failure }
                guard streams.count < peerMaximumStreams else { return nil }
                guard nextStreamID < 0x7FFF_FFFF else {
                    var failure = EtcdHTTP.Failure("the connection has used all its stream identifiers")
                    failure.notProcessed = true
                    throw failure
                }
                let stream = HTTP2StreamState(
                    id: nextStreamID, receiveWindow: Self.streamWindow, sendWindow: peerInitialWindow)
                nextStreamID += 2
                streams[stream.id] = stream
                var bodyFits = false
                if let body, body.count <= min(stream.sendWindow, connectionSendWindow, peerMaximumFrameSize) {
                    stream.sendWindow -= body.count
                    connectionSendWindow -= body.count
                    bodyFits = true
                }
                return (stream, peerMaximumFrameSize, bodyFits)
            }
            guard let (stream, frameSize, bodyFits) = opened else { continue }
            let block = encoder.encode(request)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(
                block.count + (block.count / frameSize + 2) * HTTP2Frame.headerSize + (bodyFits ? body?.count ?? 0 : 0))
            var offset = 0
            repeat {
                let end = min(block.count, offset + frameSize)
                HTTP2Frame.appendHead(
                    length: end - offset, type: offset == 0 ? HTTP2Frame.headers : HTTP2Frame.continuation,
                    flags: end == block.count ? HTTP2Frame.endHeaders : 0, stream: stream.id, to: &bytes)
                bytes.append(contentsOf: block[offset..<end])
                offset = end
            } while offset < block.count
            if bodyFits, let body {
                HTTP2Frame.appendHead(
                    length: body.count, type: HTTP2Frame.data, flags: HTTP2Frame.endStream, stream: stream.id,
                    to: &bytes)
                bytes.append(contentsOf: body)
            }
            do throws(EtcdHTTP.Failure) { try socket.write(bytes) } catch {
                fail(error)
                throw error
            }
            if bodyFits {
                locked {
                    stream.localEnded = true
                    if stream.remoteEnded { closeStream(stream) }
                }
            }
            return (stream, bodyFits)
        }
    }

    /// Waits until the member's limit of concurrent streams leaves room for one more.
    private func waitForFreeStream(deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure) {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let failure = unusableFailure() { throw failure }
            if streams.count < peerMaximumStreams { return }
            guard wait(until: deadline) else {
                var failure = EtcdHTTP.Failure(
                    "allows \(peerMaximumStreams) concurrent streams on a connection (SETTINGS_MAX_CONCURRENT_STREAMS) and none ended in time for another"
                )
                failure.timedOut = true
                failure.notProcessed = true
                throw failure
            }
        }
    }

    /// Why no stream can be opened now (under the lock): a GOAWAY, or the connection broken or closed.
    private func unusableFailure() -> EtcdHTTP.Failure? {
        if var failure = broken {
            failure.notProcessed = true
            return failure
        }
        if goAwayLastStream != nil {
            var failure = EtcdHTTP.Failure("is going away (it sent GOAWAY): the connection takes no new requests")
            failure.notProcessed = true
            return failure
        }
        return nil
    }

    /// Sends `data` on `stream` as DATA frames, each as large as both windows and the member's frame size
    /// allow, waiting for WINDOW_UPDATEs until `deadline`; `endStream` ends the request.
    func send(_ data: Data, on stream: HTTP2StreamState, endStream: Bool, deadline: ContinuousClock.Instant?)
        throws(EtcdHTTP.Failure)
    {
        try send([UInt8](data), on: stream, endStream: endStream, deadline: deadline)
    }

    /// ``send(_:on:endStream:deadline:)`` of bytes.
    func send(_ bytes: [UInt8], on stream: HTTP2StreamState, endStream: Bool, deadline: ContinuousClock.Instant?)
        throws(EtcdHTTP.Failure)
    {
        var offset = 0
        repeat {
            let count = try locked { () throws(EtcdHTTP.Failure) -> Int in
                while true {
                    if let failure = stream.failure { throw failure }
                    if stream.localEnded {
                        throw EtcdHTTP.Failure("the request was ended already: nothing more can be sent")
                    }
                    let left = bytes.count - offset
                    if left == 0 { return 0 }
                    let window = min(stream.sendWindow, connectionSendWindow)
                    if window > 0 {
                        let count = min(left, window, peerMaximumFrameSize)
                        stream.sendWindow -= count
                        connectionSendWindow -= count
                        return count
                    }
                    guard wait(until: deadline) else {
                        var failure = EtcdHTTP.Failure(
                            "kept its HTTP/2 flow-control window closed: \(left) bytes of the request could not be sent in time"
                        )
                        failure.timedOut = true
                        throw failure
                    }
                }
            }
            let last = offset + count == bytes.count
            let frame = HTTP2Frame(
                type: HTTP2Frame.data, flags: endStream && last ? HTTP2Frame.endStream : 0, stream: stream.id,
                payload: Array(bytes[offset..<offset + count]))
            do throws(EtcdHTTP.Failure) { try socket.write(frame.encoded) } catch {
                fail(error)
                throw error
            }
            offset += count
        } while offset < bytes.count
        if endStream {
            locked {
                stream.localEnded = true
                if stream.remoteEnded { closeStream(stream) }
            }
        }
    }

    /// The next thing that arrived on `stream`, waiting until `deadline`; taking data grants the member
    /// its stream window again, a quarter of it at a time.
    func receive(on stream: HTTP2StreamState, deadline: ContinuousClock.Instant?) throws(EtcdHTTP.Failure)
        -> HTTP2Received
    {
        let (received, grant) = try locked { () throws(EtcdHTTP.Failure) -> (HTTP2Received, Int) in
            while true {
                if stream.hasReceived {
                    let item = stream.take()
                    return (item, windowGrant(for: item, on: stream))
                }
                if let failure = stream.failure { throw failure }
                if stream.remoteEnded { throw EtcdHTTP.Failure("the answer was read to its end: nothing more comes") }
                guard wait(on: arrival(of: stream), until: deadline) else {
                    var failure = EtcdHTTP.Failure("no answer within the timeout")
                    failure.timedOut = true
                    failure.answerStarted = stream.headReceived
                    throw failure
                }
                if !stream.hasReceived, stream.failure == nil, !stream.remoteEnded {
                    emptyWakeups.add(1, ordering: .relaxed)
                }
            }
        }
        if grant > 0 { try? socket.write(Self.windowUpdate(stream: stream.id, UInt32(grant)).encoded) }
        return received
    }

    /// The condition `stream`'s reader waits on, made at its first wait (under the lock).
    private func arrival(of stream: HTTP2StreamState) -> HTTP2Condition {
        if let arrival = stream.arrival { return arrival }
        let arrival = HTTP2Condition(sharingLockWith: condition)
        stream.arrival = arrival
        return arrival
    }

    /// What taking `item` from `stream` grants the member again (under the lock): the data taken since the
    /// last WINDOW_UPDATE, once a quarter of the stream window; 0 otherwise.
    private func windowGrant(for item: HTTP2Received, on stream: HTTP2StreamState) -> Int {
        guard case .data(let data, _) = item else { return 0 }
        stream.ungranted += data.count
        guard !stream.remoteEnded, stream.open, stream.ungranted >= Self.streamWindow / 4 else { return 0 }
        defer { stream.ungranted = 0 }
        stream.receiveWindow += stream.ungranted
        return stream.ungranted
    }

    // MARK: Consumers

    /// Hands what arrived on `stream` and everything that arrives on it from now on to `consumer`, one item at a
    /// time and in order, on the thread that reads the connection (the calling thread for what arrived
    /// already), until `consumer` returns false or the member ends the stream (then returns), or the stream
    /// fails (then throws, once everything that arrived before the failure was taken). The calling thread
    /// waits meanwhile. Taking data grants the member its stream window again, as ``receive(on:deadline:)``
    /// does.
    func consume(_ stream: HTTP2StreamState, with consumer: @escaping (HTTP2Received) -> Bool)
        throws(EtcdHTTP.Failure)
    {
        let (drainHere, arrival) = locked { () -> (Bool, HTTP2Condition) in
            let arrival = self.arrival(of: stream)
            stream.consumer = consumer
            stream.consumerFinished = false
            guard stream.hasReceived, !stream.consuming else { return (false, arrival) }
            stream.consuming = true
            return (true, arrival)
        }
        if drainHere { drain(stream) }
        try locked { () throws(EtcdHTTP.Failure) in
            defer { stream.consumer = nil }
            while true {
                if !stream.consuming {
                    if stream.consumerFinished { return }
                    if !stream.hasReceived, let failure = stream.failure { throw failure }
                    if !stream.hasReceived, stream.remoteEnded { return }
                }
                arrival.wait()
            }
        }
    }

    /// Runs the consumers that have something to take, the reader thread lent to them meanwhile; false when
    /// another reader took over meanwhile (``relieveReader()``): this thread then stops reading, and the
    /// consumers it had not started are the new reader's.
    private func runConsumers(generation: Int) -> Bool {
        // The timer's system calls are made outside the lock: a caller woken by an answer this reader
        // just handled takes the lock at once.
        let arm = locked { () -> Bool in
            lentSince = .now
            guard !reliefArmed else { return false }
            reliefArmed = true
            return true
        }
        if arm { armRelief(after: Self.reliefDelay) }
        // One at a time from the shared list: those not started when another reader takes over are its own.
        while let stream = locked({ () -> HTTP2StreamState? in
            guard readerGeneration == generation, !readyConsumers.isEmpty else { return nil }
            return readyConsumers.removeFirst()
        }) {
            drain(stream)
        }
        let (reading, disarm) = locked { () -> (Bool, Bool) in
            guard readerGeneration == generation else { return (false, false) }
            lentSince = nil
            // Without a kernel timer the check stays scheduled and finds nothing.
            guard reliefArmed, reliefTimer != nil else { return (true, false) }
            reliefArmed = false
            return (true, true)
        }
        if disarm { reliefTimer?.disarm() }
        return reading
    }

    /// Checks after `delay` whether consumers have kept the reader thread for ``reliefDelay`` (one check
    /// pending per connection, armed when a reader is lent to consumers, disarmed when they return). Without a
    /// kernel timer the check runs on the scheduler's own thread: it only takes the lock.
    private func armRelief(after delay: Duration) {
        guard let reliefTimer else {
            return DelayedWork.shared.afterOnOwnThread(delay) { [weak self] in self?.reliefDue() }
        }
        reliefTimer.arm(after: delay)
    }

    /// A relief check: another reader takes over from one that consumers have kept for ``reliefDelay``; a
    /// reader lent more recently is checked again when its time comes.
    private func reliefDue() {
        locked {
            guard broken == nil, let since = lentSince else {
                reliefArmed = false
                return
            }
            let relief = since + Self.reliefDelay
            if ContinuousClock.now >= relief {
                reliefArmed = false
                relieveReader()
            } else {
                armRelief(after: ContinuousClock.now.duration(to: relief))
            }
        }
    }

    /// Hands `stream`'s inbox to its consumer until it is empty or the consumer wants nothing more, then
    /// lets the next arrival find the stream's consumer idle (and ``consume(_:with:)`` return, if it is done).
    private func drain(_ stream: HTTP2StreamState) {
        repeat {
            while handNext(stream) {}
        } while !locked({ () -> Bool in
            // What another reader queued since the inbox was last found empty is this thread's to hand over.
            if stream.consumer != nil, stream.hasReceived { return false }
            // Only now, with no reference to the consumer left on this thread: `consume` may then return, and
            // its caller's closure must not outlive it.
            stream.consuming = false
            if stream.consumerFinished || stream.failure != nil || stream.remoteEnded { stream.arrival?.broadcast() }
            return true
        })
    }

    /// Hands the oldest item of `stream`'s inbox to its consumer; false when there was none to hand, or the
    /// consumer wants nothing more.
    private func handNext(_ stream: HTTP2StreamState) -> Bool {
        let next = locked { () -> (HTTP2Received, (HTTP2Received) -> Bool, Int)? in
            guard let consumer = stream.consumer, stream.hasReceived else { return nil }
            let item = stream.take()
            return (item, consumer, windowGrant(for: item, on: stream))
        }
        guard let (item, consumer, grant) = next else { return false }
        if grant > 0 { try? socket.write(Self.windowUpdate(stream: stream.id, UInt32(grant)).encoded) }
        guard consumer(item) else {
            locked {
                stream.consumer = nil
                stream.consumerFinished = true
            }
            return false
        }
        return true
    }

    /// Starts a reader thread that goes on reading where the one running consumers stopped (under the lock).
    private func relieveReader() {
        lentSince = nil
        readerGeneration += 1
        startReader(generation: readerGeneration)
    }

    /// Fails `stream` for its caller and resets it with CANCEL unless it ended already.
    func cancel(_ stream: HTTP2StreamState) {
        let reset = locked { () -> Bool in
            if stream.failure == nil {
                var failure = EtcdHTTP.Failure("the exchange was cancelled")
                failure.notProcessed = !stream.localEnded
                stream.failure = failure
            }
            stream.arrival?.broadcast()
            guard stream.open else { return false }
            closeStream(stream)
            return true
        }
        if reset {
            let frame = HTTP2Frame(
                type: HTTP2Frame.resetStream, stream: stream.id, payload: Self.code(HTTP2ErrorCode.cancel))
            try? socket.write(frame.encoded)
        }
    }

    /// Takes `stream` out of the open streams, freeing its slot (under the lock): wakes the connection's
    /// waiters (a free slot; a sender of the stream) and the stream's reader.
    private func closeStream(_ stream: HTTP2StreamState) {
        var wakes = HTTP2Wakes()
        closeStream(stream, wakes: &wakes)
        wakes.wake()
    }

    /// ``closeStream(_:)``, its waiters added to `wakes` instead of woken now.
    private func closeStream(_ stream: HTTP2StreamState, wakes: inout HTTP2Wakes) {
        stream.open = false
        streams[stream.id] = nil
        wakes.add(condition)
        wakes.add(stream.arrival)
    }

    /// The member wrote HEADERS or DATA (under the lock): a free pass for the next PING, unless a PING is
    /// out and unanswered — what arrives before its ACK may have been written before the member took it.
    private func noteMemberWrote() {
        if !pings.values.contains(false) { wroteSinceLastPing = true }
    }

    /// Counts a PING as sent for ``memberWroteSinceLastPing`` (before sending it: a probe that decided to
    /// ping, so that another probe deciding right after does not take a PING as free too).
    func notePingSent() { locked { wroteSinceLastPing = false } }

    /// Sends a PING and waits for its ACK until `deadline`; the round trip's time.
    func ping(deadline: ContinuousClock.Instant) throws(EtcdHTTP.Failure) -> Duration {
        let started = ContinuousClock.now
        let id = try locked { () throws(EtcdHTTP.Failure) -> UInt64 in
            if let broken { throw broken }
            defer { nextPing += 1 }
            pings[nextPing] = false
            wroteSinceLastPing = false
            return nextPing
        }
        var payload: [UInt8] = []
        HTTP2Frame.append32(UInt32(id >> 32), to: &payload)
        HTTP2Frame.append32(UInt32(id & 0xFFFF_FFFF), to: &payload)
        do throws(EtcdHTTP.Failure) {
            try socket.write(HTTP2Frame(type: HTTP2Frame.ping, stream: 0, payload: payload).encoded)
        } catch {
            fail(error)
            throw error
        }
        // The member gets its whole time from when the PING went out: on a busy machine the thread may have
        // waited for a CPU before writing it.
        let answerBy = max(deadline, .now + started.duration(to: deadline))
        return try locked { () throws(EtcdHTTP.Failure) -> Duration in
            defer { pings[id] = nil }
            while pings[id] != true {
                if let broken { throw broken }
                if !wait(until: answerBy) {
                    var failure = EtcdHTTP.Failure("did not answer an HTTP/2 PING in time")
                    failure.timedOut = true
                    throw failure
                }
            }
            return started.duration(to: .now)
        }
    }

    // MARK: Reading

    /// A header block being received: its HEADERS frame's stream and END_STREAM, and its bytes so far.
    private struct PendingBlock {
        let stream: UInt32
        let endStream: Bool
        var bytes: [UInt8]
    }

    /// What reading keeps between reads: the bytes of frames not yet handled, the HPACK decoder's table, a
    /// header block waiting for its CONTINUATION frames, whether the server's preface is still to come.
    private struct ReaderState {
        var frames = HTTP2FrameReader(maximumSize: HTTP2Frame.defaultMaximumSize)
        var decoder: HPACKDecoder
        var pending: PendingBlock?
        var first = true
    }

    /// Starts reader thread number `generation`.
    private func startReader(generation: Int) {
        let thread = Thread { [self] in readLoop(generation: generation) }
        thread.name = "ObservableDefaults.HTTP2"
        thread.start()
    }

    /// A reader thread: splits what was read into frames, handles each (running the consumers it fed), reads,
    /// until the connection ends or fails — then closes the socket — or another reader took over.
    private func readLoop(generation: Int) {
        var state = locked { readerState }
        let size = 16384
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
        var relieved = false
        var wakes = HTTP2Wakes()
        defer {
            wakes.wake()
            buffer.deallocate()
            if !relieved { socket.close() }
        }
        while true {
            // Frames a relieved reader left come first.
            do throws(HTTP2ProtocolError) {
                while true {
                    if state.first, state.frames.bufferedCount >= 5 {
                        try checkPreface(state.frames)
                    }
                    guard let frame = try state.frames.next() else { break }
                    if state.first {
                        guard frame.type == HTTP2Frame.settings, !frame.has(HTTP2Frame.ack) else {
                            throw HTTP2ProtocolError(
                                "a \(HTTP2Frame.name(of: frame.type)) frame first, expected the server's SETTINGS (its connection preface)"
                            )
                        }
                        state.first = false
                    }
                    try handle(frame, pending: &state.pending, decoder: &state.decoder, wakes: &wakes)
                    guard lendToReadyConsumers(saving: state, generation: generation, waking: &wakes) else {
                        relieved = true
                        return
                    }
                }
            } catch {
                return protocolFailure(error)
            }
            // Consumers a relieved reader had not started yet.
            guard lendToReadyConsumers(saving: state, generation: generation, waking: &wakes) else {
                relieved = true
                return
            }
            wakes.wake()
            if locked({ broken != nil }) { return }
            let count: Int
            do throws(EtcdHTTP.Failure) { count = try socket.read(into: buffer) } catch {
                return fail(error)
            }
            guard count > 0 else {
                let failure = EtcdHTTP.Failure(
                    state.first
                        ? "closed the connection without an HTTP/2 answer (if the member serves TLS, its endpoint must be https://)"
                        : "closed the connection")
                return fail(failure)
            }
            reads.add(1, ordering: .relaxed)
            state.frames.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Lends reader thread `generation` to the consumers with something to take, if any, keeping `state` for
    /// a reader that takes over meanwhile, after waking `wakes` (the consumers may take long); false once
    /// another reader took over (this thread then stops reading).
    private func lendToReadyConsumers(saving state: ReaderState, generation: Int, waking wakes: inout HTTP2Wakes)
        -> Bool
    {
        let ready = locked { () -> Bool in
            guard !readyConsumers.isEmpty else { return false }
            readerState = state
            return true
        }
        guard ready else { return true }
        wakes.wake()
        return runConsumers(generation: generation)
    }

    /// An answer in HTTP/1 where the server's preface belongs is worth its own sentence.
    private func checkPreface(_ reader: HTTP2FrameReader) throws(HTTP2ProtocolError) {
        let start = reader.peek(40)
        if start.starts(with: "HTTP/".utf8) {
            throw HTTP2ProtocolError(
                "an HTTP/1 answer ('\(EtcdHTTP.excerpt(start))') to the HTTP/2 preface, expected SETTINGS (the endpoint does not speak HTTP/2 with prior knowledge; if the member serves TLS, its endpoint must be https://)"
            )
        }
        if let first = start.first, (0x14...0x17).contains(first), start.dropFirst().first == 0x03 {
            throw HTTP2ProtocolError(
                "a TLS record ('\(EtcdHTTP.excerpt(start))') to the HTTP/2 preface, expected SETTINGS (the member serves TLS: its endpoint must be https://)"
            )
        }
    }

    /// A connection error: the member gets a GOAWAY with `error.code`, and every stream fails with what it sent.
    private func protocolFailure(_ error: HTTP2ProtocolError) {
        let failure: EtcdHTTP.Failure
        if let limit = error.sizeLimit {
            failure = EtcdHTTP.Failure.tooLarge(
                error.text.hasPrefix("a header") ? "a header block" : "an HTTP/2 frame", limit: limit, error.text,
                kind: error.text.hasPrefix("a header") ? "header blocks" : "frames")
        } else {
            failure = EtcdHTTP.Failure.malformed("HTTP/2: \(error.text)")
        }
        try? socket.write(
            Self.goAway(error.code, lastStream: 0, debug: Array(error.text.utf8.prefix(200))).encoded)
        fail(failure)
    }

    /// The connection failed: every stream fails with `failure`.
    private func fail(_ failure: EtcdHTTP.Failure) {
        locked { breakConnection(failure) }
    }

    /// Handles one frame, enforcing that a header block's CONTINUATION frames follow it alone.
    private func handle(
        _ frame: HTTP2Frame, pending: inout PendingBlock?, decoder: inout HPACKDecoder, wakes: inout HTTP2Wakes
    ) throws(HTTP2ProtocolError) {
        if let block = pending {
            guard frame.type == HTTP2Frame.continuation, frame.stream == block.stream else {
                throw HTTP2ProtocolError(
                    "a \(HTTP2Frame.name(of: frame.type)) frame on stream \(frame.stream) inside a header block of stream \(block.stream), expected CONTINUATION"
                )
            }
            pending?.bytes += frame.payload
            try checkBlockSize(pending?.bytes.count ?? 0)
            if frame.has(HTTP2Frame.endHeaders), let complete = pending {
                pending = nil
                try deliverHeaders(complete, decoder: &decoder, wakes: &wakes)
            }
            return
        }
        switch frame.type {
        case HTTP2Frame.data: try receiveData(frame, wakes: &wakes)
        case HTTP2Frame.headers:
            try requireStream(frame)
            var fragment = try frame.unpadded()
            if frame.has(HTTP2Frame.priorityFlag) {
                guard fragment.count >= 5 else {
                    throw HTTP2ProtocolError("a HEADERS frame too short for its priority")
                }
                fragment = fragment.dropFirst(5)
            }
            let block = PendingBlock(
                stream: frame.stream, endStream: frame.has(HTTP2Frame.endStream), bytes: Array(fragment))
            try checkBlockSize(block.bytes.count)
            if frame.has(HTTP2Frame.endHeaders) {
                try deliverHeaders(block, decoder: &decoder, wakes: &wakes)
            } else {
                pending = block
            }
        case HTTP2Frame.priority:
            try requireStream(frame)
            guard frame.payload.count == 5 else { throw sizeError(frame, expected: "5") }
        case HTTP2Frame.resetStream: try receiveReset(frame)
        case HTTP2Frame.settings: try receiveSettings(frame)
        case HTTP2Frame.pushPromise:
            throw HTTP2ProtocolError("a PUSH_PROMISE frame, expected none (the client disables server push)")
        case HTTP2Frame.ping:
            guard frame.stream == 0 else {
                throw HTTP2ProtocolError("a PING frame on stream \(frame.stream), expected stream 0")
            }
            guard frame.payload.count == 8 else { throw sizeError(frame, expected: "8") }
            if frame.has(HTTP2Frame.ack) {
                let id =
                    UInt64(HTTP2Frame.read32(frame.payload, at: 0)) << 32
                    | UInt64(HTTP2Frame.read32(frame.payload, at: 4))
                locked {
                    if pings[id] != nil {
                        pings[id] = true
                        // What arrived before the ACK may have been written before the member took the PING
                        // (which used up what it had written for free); what comes after was written after.
                        wroteSinceLastPing = false
                    }
                    condition.broadcast()
                }
            } else {
                socket.sendWithNextWrite(
                    HTTP2Frame(type: HTTP2Frame.ping, flags: HTTP2Frame.ack, stream: 0, payload: frame.payload).encoded)
            }
        case HTTP2Frame.goAway: try receiveGoAway(frame)
        case HTTP2Frame.windowUpdate: try receiveWindowUpdate(frame)
        case HTTP2Frame.continuation:
            throw HTTP2ProtocolError("a CONTINUATION frame on stream \(frame.stream) outside a header block")
        default: break  // unknown frame types are ignored (RFC 9113, 4.1)
        }
    }

    private func requireStream(_ frame: HTTP2Frame) throws(HTTP2ProtocolError) {
        guard frame.stream != 0 else {
            throw HTTP2ProtocolError("a \(HTTP2Frame.name(of: frame.type)) frame on stream 0, expected a stream's")
        }
    }

    private func sizeError(_ frame: HTTP2Frame, expected: String) -> HTTP2ProtocolError {
        HTTP2ProtocolError(
            "a \(HTTP2Frame.name(of: frame.type)) frame of \(frame.payload.count) bytes, expected \(expected)",
            code: HTTP2ErrorCode.frameSizeError)
    }

    private func checkBlockSize(_ count: Int) throws(HTTP2ProtocolError) {
        guard count <= limits.headBytes else {
            var error = HTTP2ProtocolError(
                "a header block (HEADERS and CONTINUATION frames) of more than \(count - 1) bytes",
                code: HTTP2ErrorCode.enhanceYourCalm)
            error.sizeLimit = limits.headBytes
            throw error
        }
    }

    /// The stream `id` for a frame that belongs to one: `nil` when it ended already (the member may still
    /// be sending on it), an error for a stream the client never opened.
    private func stream(_ id: UInt32, for type: UInt8) throws(HTTP2ProtocolError) -> HTTP2StreamState? {
        try locked { () throws(HTTP2ProtocolError) in try openedStream(id, for: type) }
    }

    /// ``stream(_:for:)`` under the lock.
    private func openedStream(_ id: UInt32, for type: UInt8) throws(HTTP2ProtocolError) -> HTTP2StreamState? {
        let stream = streams[id]
        if stream == nil, id >= nextStreamID || id % 2 == 0 {
            throw HTTP2ProtocolError(
                "a \(HTTP2Frame.name(of: type)) frame on stream \(id), which the client never opened")
        }
        return stream
    }

    /// Decodes a complete header block and hands it to its stream: a head (1xx ones too), or trailers
    /// (which must end the stream).
    private func deliverHeaders(_ block: PendingBlock, decoder: inout HPACKDecoder, wakes: inout HTTP2Wakes)
        throws(HTTP2ProtocolError)
    {
        // Decoded even for a stream that ended: the dynamic table must follow every block.
        let headers: [HTTP2Header]
        do throws(HPACKError) { headers = try decoder.decode(block.bytes) } catch {
            throw HTTP2ProtocolError(
                "a header block HPACK cannot decode: \(error.text)", code: HTTP2ErrorCode.compressionError)
        }
        try locked { () throws(HTTP2ProtocolError) in
            guard let stream = try openedStream(block.stream, for: HTTP2Frame.headers) else { return }
            guard !stream.remoteEnded else {
                throw HTTP2ProtocolError("a HEADERS frame on stream \(stream.id) after it ended")
            }
            let informational = headers.first { $0.name == ":status" }?.value.hasPrefix("1") ?? false
            if stream.headReceived, !block.endStream {
                throw HTTP2ProtocolError(
                    "a second header block on stream \(stream.id) without END_STREAM, expected trailers to end the stream"
                )
            }
            if informational {
                stream.informationalHeads += 1
                guard stream.informationalHeads <= 8 else {
                    throw HTTP2ProtocolError("more than 8 informational (1xx) heads on stream \(stream.id)")
                }
            } else {
                stream.headReceived = true
            }
            stream.inbox.append(.headers(headers, endStream: block.endStream))
            noteMemberWrote()
            if block.endStream { endRemote(stream, wakes: &wakes) }
            wakes.add(arrived(on: stream))
        }
    }

    /// Something was queued for `stream` (under the lock): its consumer takes it once the frame is handled,
    /// unless a thread is running the consumer already (that thread takes it); without one, returns the
    /// condition its caller waits on, to be woken once the lock is released (woken under it, the caller
    /// would block on the lock at once).
    private func arrived(on stream: HTTP2StreamState) -> HTTP2Condition? {
        guard stream.consumer != nil else { return stream.arrival }
        if !stream.consuming {
            stream.consuming = true
            readyConsumers.append(stream)
        }
        return nil
    }

    /// The member ended its side of `stream` (under the lock).
    private func endRemote(_ stream: HTTP2StreamState, wakes: inout HTTP2Wakes) {
        stream.remoteEnded = true
        if stream.localEnded { closeStream(stream, wakes: &wakes) }
    }

    /// DATA: checked against both receive windows and queued for the caller; the connection window is
    /// granted again at once once half used (the stream windows bound what is kept).
    private func receiveData(_ frame: HTTP2Frame, wakes: inout HTTP2Wakes) throws(HTTP2ProtocolError) {
        try requireStream(frame)
        let length = frame.payload.count
        let content = try frame.unpadded()
        let connectionGrant = try locked { () throws(HTTP2ProtocolError) -> Int in
            let stream = try openedStream(frame.stream, for: frame.type)
            guard length <= connectionReceiveWindow else {
                throw HTTP2ProtocolError(
                    "\(length) bytes of DATA when the connection's window had room for \(connectionReceiveWindow)",
                    code: HTTP2ErrorCode.flowControlError)
            }
            connectionReceiveWindow -= length
            noteMemberWrote()
            if let stream {
                guard stream.headReceived else {
                    throw HTTP2ProtocolError("a DATA frame on stream \(stream.id) before its head (HEADERS)")
                }
                guard !stream.remoteEnded else {
                    throw HTTP2ProtocolError(
                        "a DATA frame on stream \(stream.id) after it ended", code: HTTP2ErrorCode.streamClosed)
                }
                guard length <= stream.receiveWindow else {
                    throw HTTP2ProtocolError(
                        "\(length) bytes of DATA on stream \(stream.id) when its window had room for \(stream.receiveWindow)",
                        code: HTTP2ErrorCode.flowControlError)
                }
                stream.receiveWindow -= length
                stream.ungranted += length - content.count  // padding: never taken by the caller
                let endStream = frame.has(HTTP2Frame.endStream)
                if !content.isEmpty || endStream {
                    // The payload itself when it has no padding (the usual case): no copy.
                    let bytes = content.count == length ? frame.payload : Array(content)
                    stream.inbox.append(.data(bytes, endStream: endStream))
                }
                if endStream { endRemote(stream, wakes: &wakes) }
                wakes.add(arrived(on: stream))
            }
            guard connectionReceiveWindow <= Self.connectionWindow / 2 else { return 0 }
            defer { connectionReceiveWindow = Self.connectionWindow }
            return Self.connectionWindow - connectionReceiveWindow
        }
        if connectionGrant > 0 { try? socket.write(Self.windowUpdate(stream: 0, UInt32(connectionGrant)).encoded) }
    }

    /// RST_STREAM: the stream fails naming the code; REFUSED_STREAM means not processed.
    private func receiveReset(_ frame: HTTP2Frame) throws(HTTP2ProtocolError) {
        try requireStream(frame)
        guard frame.payload.count == 4 else { throw sizeError(frame, expected: "4") }
        guard let stream = try stream(frame.stream, for: frame.type) else { return }
        let code = HTTP2Frame.read32(frame.payload, at: 0)
        locked {
            var failure = EtcdHTTP.Failure("reset the stream (RST_STREAM \(HTTP2ErrorCode.name(code)))")
            failure.notProcessed = code == HTTP2ErrorCode.refusedStream
            failure.answerStarted = stream.headReceived
            if stream.failure == nil, !(code == HTTP2ErrorCode.noError && stream.remoteEnded) {
                stream.failure = failure
            }
            closeStream(stream)
        }
    }

    /// SETTINGS: applied (a new initial window changes every open stream's window, perhaps below zero)
    /// and acknowledged.
    private func receiveSettings(_ frame: HTTP2Frame) throws(HTTP2ProtocolError) {
        guard frame.stream == 0 else {
            throw HTTP2ProtocolError("a SETTINGS frame on stream \(frame.stream), expected stream 0")
        }
        if frame.has(HTTP2Frame.ack) {
            guard frame.payload.isEmpty else { throw sizeError(frame, expected: "0 with ACK") }
            return
        }
        guard frame.payload.count % 6 == 0 else { throw sizeError(frame, expected: "a multiple of 6") }
        try locked { () throws(HTTP2ProtocolError) in
            for offset in stride(from: 0, to: frame.payload.count, by: 6) {
                let identifier = UInt16(frame.payload[offset]) << 8 | UInt16(frame.payload[offset + 1])
                let value = HTTP2Frame.read32(frame.payload, at: offset + 2)
                switch identifier {
                case 2:  // ENABLE_PUSH
                    guard value <= 1 else { throw HTTP2ProtocolError("SETTINGS_ENABLE_PUSH \(value), expected 0 or 1") }
                case 3: peerMaximumStreams = Int(value)  // MAX_CONCURRENT_STREAMS
                case 4:  // INITIAL_WINDOW_SIZE
                    guard Int(value) <= Self.maximumWindow else {
                        throw HTTP2ProtocolError(
                            "SETTINGS_INITIAL_WINDOW_SIZE \(value), above 2^31-1", code: HTTP2ErrorCode.flowControlError
                        )
                    }
                    let change = Int(value) - peerInitialWindow
                    peerInitialWindow = Int(value)
                    for stream in streams.values {
                        stream.sendWindow += change
                        guard stream.sendWindow <= Self.maximumWindow else {
                            throw HTTP2ProtocolError(
                                "SETTINGS_INITIAL_WINDOW_SIZE \(value), which takes stream \(stream.id)'s window above 2^31-1",
                                code: HTTP2ErrorCode.flowControlError)
                        }
                    }
                case 5:  // MAX_FRAME_SIZE
                    guard (16384...16_777_215).contains(value) else {
                        throw HTTP2ProtocolError("SETTINGS_MAX_FRAME_SIZE \(value), expected 16384 to 16777215")
                    }
                    peerMaximumFrameSize = Int(value)
                default: break  // HEADER_TABLE_SIZE (the encoder keeps no table), MAX_HEADER_LIST_SIZE, unknown
                }
            }
            settingsReceived = true
            condition.broadcast()
        }
        try? socket.write(HTTP2Frame(type: HTTP2Frame.settings, flags: HTTP2Frame.ack, stream: 0).encoded)
    }

    /// GOAWAY: no new streams; those above its last stream fail as not processed, the others go on.
    private func receiveGoAway(_ frame: HTTP2Frame) throws(HTTP2ProtocolError) {
        guard frame.stream == 0 else {
            throw HTTP2ProtocolError("a GOAWAY frame on stream \(frame.stream), expected stream 0")
        }
        guard frame.payload.count >= 8 else { throw sizeError(frame, expected: "at least 8") }
        let last = HTTP2Frame.read32(frame.payload, at: 0) & 0x7FFF_FFFF
        let code = HTTP2Frame.read32(frame.payload, at: 4)
        let debug = frame.payload.dropFirst(8)
        let reason = "GOAWAY \(HTTP2ErrorCode.name(code))" + (debug.isEmpty ? "" : ", '\(EtcdHTTP.excerpt(debug))'")
        locked {
            goAwayLastStream = min(goAwayLastStream ?? last, last)
            if code == HTTP2ErrorCode.enhanceYourCalm, debug.elementsEqual("too_many_pings".utf8) {
                pingedTooOften = true
            }
            for stream in streams.values where stream.id > last {
                var failure = EtcdHTTP.Failure(
                    "did not process the request: the member is going away (\(reason)); it is safe to send again")
                failure.notProcessed = true
                if stream.failure == nil { stream.failure = failure }
                closeStream(stream)
            }
            condition.broadcast()
        }
    }

    /// WINDOW_UPDATE: more room to send on the connection or a stream.
    private func receiveWindowUpdate(_ frame: HTTP2Frame) throws(HTTP2ProtocolError) {
        guard frame.payload.count == 4 else { throw sizeError(frame, expected: "4") }
        let increment = Int(HTTP2Frame.read32(frame.payload, at: 0) & 0x7FFF_FFFF)
        guard increment > 0 else {
            throw HTTP2ProtocolError("a WINDOW_UPDATE of 0 on stream \(frame.stream), expected a positive increment")
        }
        if frame.stream == 0 {
            try locked { () throws(HTTP2ProtocolError) in
                connectionSendWindow += increment
                guard connectionSendWindow <= Self.maximumWindow else {
                    throw HTTP2ProtocolError(
                        "a WINDOW_UPDATE that takes the connection's window above 2^31-1",
                        code: HTTP2ErrorCode.flowControlError)
                }
                condition.broadcast()
            }
            return
        }
        guard let stream = try stream(frame.stream, for: frame.type) else { return }
        try locked { () throws(HTTP2ProtocolError) in
            stream.sendWindow += increment
            guard stream.sendWindow <= Self.maximumWindow else {
                throw HTTP2ProtocolError(
                    "a WINDOW_UPDATE that takes stream \(stream.id)'s window above 2^31-1",
                    code: HTTP2ErrorCode.flowControlError)
            }
            condition.broadcast()
        }
    }

    /// Runs `body` holding the condition's lock (`NSCondition.withLock` throws untyped errors).
    private func locked<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    // MARK: Frames the client sends

    /// A WINDOW_UPDATE granting `increment` bytes on `stream` (0: the connection).
    static func windowUpdate(stream: UInt32, _ increment: UInt32) -> HTTP2Frame {
        var payload: [UInt8] = []
        HTTP2Frame.append32(increment, to: &payload)
        return HTTP2Frame(type: HTTP2Frame.windowUpdate, stream: stream, payload: payload)
    }

    /// A GOAWAY with `code`, the last stream processed, and `debug` data.
    static func goAway(_ code: UInt32, lastStream: UInt32, debug: [UInt8] = []) -> HTTP2Frame {
        var payload: [UInt8] = []
        HTTP2Frame.append32(lastStream, to: &payload)
        HTTP2Frame.append32(code, to: &payload)
        return HTTP2Frame(type: HTTP2Frame.goAway, stream: 0, payload: payload + debug)
    }

    /// An error code as a RST_STREAM payload.
    static func code(_ code: UInt32) -> [UInt8] {
        var payload: [UInt8] = []
        HTTP2Frame.append32(code, to: &payload)
        return payload
    }
}
