/// HPACK's Huffman code (RFC 7541, Appendix B): decoding of Huffman-coded header strings and encoding.
///
/// The code is canonical — codes of one length are consecutive, in the order of their symbols, and shorter
/// codes come first — so it is fully given by the length of each symbol's code, which is all this table
/// keeps; the codes themselves are derived from it once.
enum HPACKHuffman {
    /// The length in bits of the code of each symbol: bytes 0–255, then EOS (256).
    static let codeLengths: [UInt8] = [
        13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,  // 0–15
        28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,  // 16–31
        6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,  // ' ' – '/'
        5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,  // '0' – '?'
        13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,  // '@' – 'O'
        7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,  // 'P' – '_'
        15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,  // '`' – 'o'
        6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,  // 'p' – 127
        20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,  // 128–143
        24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,  // 144–159
        22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,  // 160–175
        21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,  // 176–191
        26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,  // 192–207
        19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,  // 208–223
        20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,  // 224–239
        26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,  // 240–255
        30  // EOS
    ]

    /// The end-of-string symbol, which must never appear in a decoded string.
    static let endOfString = 256

    /// Each symbol's code, right-aligned, derived from ``codeLengths``.
    static let codes: [UInt32] = {
        let order = (0...256).sorted { (codeLengths[$0], $0) < (codeLengths[$1], $1) }
        var codes = [UInt32](repeating: 0, count: 257)
        var code: UInt32 = 0
        var length = codeLengths[order[0]]
        for (position, symbol) in order.enumerated() {
            if position > 0 {
                code += 1
                code <<= UInt32(codeLengths[symbol] - length)
                length = codeLengths[symbol]
            }
            codes[symbol] = code
        }
        return codes
    }()

    /// A binary decoding tree: node `n`'s children are `children[2n]` (bit 0) and `children[2n + 1]`
    /// (bit 1); a child below 0 is the leaf of symbol `-child - 1`, 0 is no child (the root is never one).
    private static let children: [Int32] = {
        var children: [Int32] = [0, 0]
        for symbol in 0...256 {
            let length = Int(codeLengths[symbol])
            var node = 0
            for bit in stride(from: length - 1, through: 0, by: -1) {
                let slot = 2 * node + Int((codes[symbol] >> UInt32(bit)) & 1)
                if bit == 0 {
                    children[slot] = Int32(-symbol - 1)
                } else {
                    if children[slot] == 0 {
                        children[slot] = Int32(children.count / 2)
                        children += [0, 0]
                    }
                    node = Int(children[slot])
                }
            }
        }
        return children
    }()

    /// Decodes `bytes`, failing (with what is wrong) for EOS in the string, padding longer than 7 bits, or
    /// padding that is not the most significant bits of EOS (all ones). The result is at most `limit` bytes.
    static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes, limit: Int) throws(HPACKError) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(min(limit, bytes.count * 8 / 5))
        var node = 0
        // Bits read since the last complete symbol, and whether all of them were ones (valid padding so far).
        var pending = 0
        var allOnes = true
        for byte in bytes {
            for bit in stride(from: 7, through: 0, by: -1) {
                let one = (byte >> UInt8(bit)) & 1 == 1
                let child = children[2 * node + (one ? 1 : 0)]
                pending += 1
                allOnes = allOnes && one
                if child < 0 {
                    let symbol = Int(-child - 1)
                    guard symbol != endOfString else {
                        throw HPACKError("a Huffman-coded string contains the EOS symbol")
                    }
                    guard result.count < limit else {
                        throw HPACKError("a Huffman-coded string decodes to more than \(limit) bytes")
                    }
                    result.append(UInt8(symbol))
                    node = 0
                    pending = 0
                    allOnes = true
                } else {
                    node = Int(child)
                }
            }
        }
        guard pending < 8 else { throw HPACKError("a Huffman-coded string ends with \(pending) bits of padding") }
        guard allOnes else { throw HPACKError("a Huffman-coded string ends with padding that is not all ones") }
        return result
    }

    /// How many bytes `bytes` take Huffman-coded.
    static func encodedCount<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Int {
        (bytes.reduce(0) { $0 + Int(codeLengths[Int($1)]) } + 7) / 8
    }

    /// `bytes` Huffman-coded, padded with ones (EOS's first bits) to a whole byte.
    static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] {
        var result: [UInt8] = []
        encode(bytes, into: &result)
        return result
    }

    /// Appends `bytes` Huffman-coded, padded as ``encode(_:)`` pads them, to `result`.
    static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes, into result: inout [UInt8]) {
        var buffer: UInt64 = 0
        var count = 0
        for byte in bytes {
            buffer = buffer << UInt64(codeLengths[Int(byte)]) | UInt64(codes[Int(byte)])
            count += Int(codeLengths[Int(byte)])
            while count >= 8 {
                count -= 8
                result.append(UInt8(truncatingIfNeeded: buffer >> UInt64(count)))
            }
        }
        if count > 0 {
            result.append(UInt8(truncatingIfNeeded: buffer << UInt64(8 - count) | (0xFF >> UInt64(count))))
        }
    }
}
