/// A growable byte buffer for the writers: plain stores into memory reserved ahead, without the
/// per-append uniqueness and capacity bookkeeping of `[UInt8]`.
struct ByteBuffer: ~Copyable {
    private var start: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// The bytes written so far.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: start, count: count)) }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if capacity - count < extra { grow(toAtLeast: count + extra) }
    }

    @inline(never)
    private mutating func grow(toAtLeast needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newStart = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newStart.initialize(from: start, count: count)
        start.deallocate()
        start = newStart
        capacity = newCapacity
    }

    mutating func append(_ byte: UInt8) {
        reserve(1)
        start[count] = byte
        count += 1
    }

    mutating func append(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        start[count] = first
        start[count + 1] = second
        count += 2
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (start + count).initialize(from: base, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    mutating func appendRepeated(_ byte: UInt8, count repeats: Int) {
        guard repeats > 0 else { return }
        reserve(repeats)
        (start + count).initialize(repeating: byte, count: repeats)
        count += repeats
    }

    /// The decimal digits of `integer` (with a `-` when negative), without making a `String`.
    mutating func appendDecimal(_ integer: Int) {
        reserve(20)
        var cursor = start + count
        if integer < 0 {
            cursor.pointee = UInt8(ascii: "-")
            cursor += 1
        }
        let digitsStart = cursor
        var magnitude = integer.magnitude
        repeat {
            cursor.pointee = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
            cursor += 1
            magnitude /= 10
        } while magnitude != 0
        // The digits came out least significant first.
        var low = digitsStart, high = cursor - 1
        while low < high {
            swap(&low.pointee, &high.pointee)
            low += 1
            high -= 1
        }
        count = cursor - start
    }
}
