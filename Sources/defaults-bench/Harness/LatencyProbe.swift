import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Receives monotonic-clock stamps written by another process and records how long each took to arrive.
///
/// Used ping-pong: the measuring thread tells the writer to write one stamp, then waits for the observer
/// (library or raw inotify, on its own thread) to deliver it with ``arrive(stamp:)``. One write in flight at
/// a time, so no event is coalesced with another and every sample is one write.
final class LatencyProbe: Sendable {
    private let state = Mutex<(last: Int, samples: [Double])>((0, []))
    private let signal = DispatchSemaphore(value: 0)

    /// Records a stamp seen now (only the first arrival of each newer stamp counts).
    func arrive(stamp: Int) {
        let now = monotonicNanoseconds()
        let isNew = state.withLock { state -> Bool in
            guard stamp > state.last else { return false }
            state.last = stamp
            state.samples.append(Double(now - stamp))
            return true
        }
        if isNew { signal.signal() }
    }

    /// Waits for the next new stamp; `false` after the timeout.
    func waitForArrival(timeoutNanoseconds: Int = 2_000_000_000) -> Bool {
        signal.wait(timeout: .now() + .nanoseconds(timeoutNanoseconds)) == .success
    }

    var samples: [Double] { state.withLock { $0.samples } }

    /// Drops the samples taken so far (after warm-up).
    func reset() { state.withLock { $0.samples.removeAll() } }
}

/// Watches a directory with inotify directly — no library code — and hands the stamp in `fileName` to a
/// probe whenever a file is renamed onto that name or closed after writing. The floor the library is
/// measured against.
final class RawInotifyObserver: Sendable {
    private let descriptor: Int32
    private let stopped = Atomic(false)
    private let finished = DispatchSemaphore(value: 0)

    init(directory: String, fileName: String, probe: LatencyProbe) {
        descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { fail("inotify_init1 failed: errno \(errno)") }
        guard inotify_add_watch(descriptor, directory, UInt32(IN_MOVED_TO | IN_CLOSE_WRITE)) >= 0 else {
            fail("inotify_add_watch(\(directory)) failed: errno \(errno)")
        }
        let path = directory + "/" + fileName
        let descriptor = self.descriptor
        let thread = Thread { [self] in
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 65_536, alignment: 8)
            defer { buffer.deallocate(); finished.signal() }
            while !stopped.load(ordering: .relaxed) {
                var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&pollDescriptor, 1, 100) > 0 else { continue }
                let count = read(descriptor, buffer, 65_536)
                guard count > 0 else { continue }
                var offset = 0
                var matched = false
                let headerSize = MemoryLayout<inotify_event>.size
                while offset + headerSize <= count {
                    let nameLength = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                    if nameLength > 0 {
                        let name = String(
                            cString: buffer.advanced(by: offset + headerSize).assumingMemoryBound(to: CChar.self))
                        if name == fileName { matched = true }
                    }
                    offset += headerSize + nameLength
                }
                if matched, let bytes = RawFile.readAll(path), let stamp = StampText.stamp(in: bytes) {
                    probe.arrive(stamp: stamp)
                }
            }
        }
        thread.name = "defaults-bench.raw-inotify"
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
        close(descriptor)
    }
}

/// The settings file the raw and hand-edit writers save: a `"stamp"` key plus padding keys.
enum StampText {
    static func file(stamp: Int, paddingKeys: Int) -> [UInt8] {
        var lines = ["  \"stamp\" : \(stamp)"]
        for index in 0..<paddingKeys { lines.append("  \"setting\(index)\" : \"value \(index)\"") }
        return Array(("{\n" + lines.joined(separator: ",\n") + "\n}\n").utf8)
    }

    /// The integer after `"stamp" :` in a file written by ``file(stamp:paddingKeys:)``.
    static func stamp(in bytes: [UInt8]) -> Int? {
        let marker = Array("\"stamp\" : ".utf8)
        guard bytes.count > marker.count else { return nil }
        var index = 0
        while index + marker.count <= bytes.count {
            if bytes[index] == marker[0] && Array(bytes[index..<(index + marker.count)]) == marker {
                var value = 0
                var position = index + marker.count
                var digits = 0
                while position < bytes.count, bytes[position] >= 48, bytes[position] <= 57 {
                    value = value * 10 + Int(bytes[position] - 48)
                    position += 1
                    digits += 1
                }
                return digits > 0 ? value : nil
            }
            index += 1
        }
        return nil
    }
}
