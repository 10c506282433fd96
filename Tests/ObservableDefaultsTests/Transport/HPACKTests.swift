import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// HPACK (RFC 7541): the examples of its Appendix C decoded with the dynamic table checked after each block,
/// the encoder's output decoded back, and hostile blocks (bad indexes, oversized table updates, Huffman
/// padding, endless integers) refused with a clear error rather than a trap.
@Suite struct HPACKTests {
    /// Bytes from the RFC's hex dumps ("8286 8441 …").
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter(\.isHexDigit))
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    static func headers(_ pairs: [(String, String)]) -> [HTTP2Header] { pairs.map { HTTP2Header($0.0, $0.1) } }

    /// The dynamic table, newest first, and its size.
    static func table(_ decoder: HPACKDecoder) -> ([HTTP2Header], Int) {
        ((0..<decoder.table.count).compactMap { decoder.table.entry($0) }, decoder.table.size)
    }

    @Test func theHeaderFieldRepresentationExamplesOfC2() throws {
        var decoder = HPACKDecoder(maximumListSize: 65536)
        #expect(
            try decoder.decode(Self.hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"))
                == Self.headers([("custom-key", "custom-header")]))
        #expect(Self.table(decoder) == (Self.headers([("custom-key", "custom-header")]), 55))

        decoder = HPACKDecoder(maximumListSize: 65536)
        #expect(
            try decoder.decode(Self.hex("040c 2f73 616d 706c 652f 7061 7468"))
                == Self.headers([(":path", "/sample/path")]))
        #expect(decoder.table.count == 0)

        decoder = HPACKDecoder(maximumListSize: 65536)
        #expect(
            try decoder.decode(Self.hex("1008 7061 7373 776f 7264 0673 6563 7265 74"))
                == Self.headers([("password", "secret")]))
        #expect(decoder.table.count == 0)

        decoder = HPACKDecoder(maximumListSize: 65536)
        #expect(try decoder.decode([0x82]) == Self.headers([(":method", "GET")]))
        #expect(decoder.table.count == 0)
    }

    static let request1 = headers([
        (":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")
    ])
    static let request2 = request1 + headers([("cache-control", "no-cache")])
    static let request3 = headers([
        (":method", "GET"), (":scheme", "https"), (":path", "/index.html"), (":authority", "www.example.com"),
        ("custom-key", "custom-value")
    ])
    static let requestTables: [([HTTP2Header], Int)] = [
        (headers([(":authority", "www.example.com")]), 57),
        (headers([("cache-control", "no-cache"), (":authority", "www.example.com")]), 110),
        (
            headers([("custom-key", "custom-value"), ("cache-control", "no-cache"), (":authority", "www.example.com")]),
            164
        )
    ]

    /// Decodes `blocks` in order on one decoder, checking each header list and the table after it.
    func check(_ blocks: [String], lists: [[HTTP2Header]], tables: [([HTTP2Header], Int)], tableSize: Int = 4096)
        throws
    {
        var decoder = HPACKDecoder(allowedTableSize: tableSize, maximumListSize: 65536)
        for (index, block) in blocks.enumerated() {
            #expect(try decoder.decode(Self.hex(block)) == lists[index], "block \(index + 1)")
            let (entries, size) = Self.table(decoder)
            #expect(entries == tables[index].0, "table after block \(index + 1)")
            #expect(size == tables[index].1, "table size after block \(index + 1)")
        }
    }

    @Test func theRequestExamplesWithoutHuffmanCodingOfC3() throws {
        try check(
            [
                "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", "8286 84be 5808 6e6f 2d63 6163 6865",
                "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"
            ], lists: [Self.request1, Self.request2, Self.request3], tables: Self.requestTables)
    }

    @Test func theRequestExamplesWithHuffmanCodingOfC4() throws {
        try check(
            [
                "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", "8286 84be 5886 a8eb 1064 9cbf",
                "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"
            ], lists: [Self.request1, Self.request2, Self.request3], tables: Self.requestTables)
    }

    static let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
    static let response1 = headers([
        (":status", "302"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
        ("location", "https://www.example.com")
    ])
    static let response2 = [HTTP2Header(":status", "307")] + response1.dropFirst()
    static let response3 = headers([
        (":status", "200"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
        ("location", "https://www.example.com"), ("content-encoding", "gzip"), ("set-cookie", cookie)
    ])
    static let responseTables: [([HTTP2Header], Int)] = [
        (
            headers([
                ("location", "https://www.example.com"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
                ("cache-control", "private"), (":status", "302")
            ]), 222
        ),
        (
            headers([
                (":status", "307"), ("location", "https://www.example.com"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
                ("cache-control", "private")
            ]), 222
        ),
        (
            headers([("set-cookie", cookie), ("content-encoding", "gzip"), ("date", "Mon, 21 Oct 2013 20:13:22 GMT")]),
            215
        )
    ]

    @Test func theResponseExamplesWithoutHuffmanCodingOfC5WithEvictions() throws {
        try check(
            [
                """
                4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
                2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d
                """,
                "4803 3330 37c1 c0bf",
                """
                88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
                54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
                5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31
                """
            ], lists: [Self.response1, Self.response2, Self.response3], tables: Self.responseTables, tableSize: 256)
    }

    @Test func theResponseExamplesWithHuffmanCodingOfC6WithEvictions() throws {
        try check(
            [
                """
                4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
                2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3
                """,
                "4883 640e ffc1 c0bf",
                """
                88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
                77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
                9587 3160 65c0 03ed 4ee5 b106 3d50 07
                """
            ], lists: [Self.response1, Self.response2, Self.response3], tables: Self.responseTables, tableSize: 256)
    }

    @Test func huffmanCodingRoundTripsEveryByteAndMatchesTheRFCsStrings() throws {
        #expect(HPACKHuffman.encode(Array("www.example.com".utf8)) == Self.hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff"))
        #expect(HPACKHuffman.encode(Array("no-cache".utf8)) == Self.hex("a8eb 1064 9cbf"))
        let all = (0...255).map(UInt8.init)
        #expect(try HPACKHuffman.decode(HPACKHuffman.encode(all), limit: 256) == all)
        // The last code is EOS, 30 ones: the canonical code ends exactly at the top.
        #expect(HPACKHuffman.codes[256] == 0x3FFF_FFFF)
    }

    @Test func theEncodersBlocksDecodeToWhatWasEncoded() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder(maximumListSize: 1 << 20)
        var random = SeededGenerator(seed: 31)
        for round in 0..<200 {
            var list = [
                HTTP2Header(":method", "POST"), HTTP2Header(":scheme", round % 2 == 0 ? "http" : "https"),
                HTTP2Header(":path", "/etcdserverpb.KV/Range"), HTTP2Header("content-type", "application/grpc"),
                HTTP2Header("te", "trailers")
            ]
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let name = String(
                    (0..<Int.random(in: 1...20, using: &random)).map { _ in
                        "abcdefghijklmnopqrstuvwxyz-0123456789".randomElement(using: &random)!
                    })
                let value = String(
                    decoding: (0..<Int.random(in: 0...300, using: &random)).map { _ in
                        UInt8.random(in: 0x20...0x7E, using: &random)
                    }, as: UTF8.self)
                list.append(HTTP2Header(name, value))
            }
            #expect(try decoder.decode(encoder.encode(list)) == list)
        }
        #expect(decoder.table.count == 0, "the encoder adds nothing to the peer's table")
    }

    /// The encoder copies a field equal to the one at the same place in its last block instead of encoding it
    /// again: every block must still decode to exactly its own list — a changed token, a changed path, a
    /// shorter or longer list, fields moved — and only the first block sets the table size.
    @Test func blocksReusingTheLastBlocksFieldsDecodeToTheirOwnLists() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder(maximumListSize: 1 << 20)
        func request(_ path: String, timeout: String, token: String?, leader: Bool = false) -> [HTTP2Header] {
            var list = [
                HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "http"), HTTP2Header(":path", path),
                HTTP2Header(":authority", "127.0.0.1:2379"), HTTP2Header("content-type", "application/grpc"),
                HTTP2Header("te", "trailers"), HTTP2Header("grpc-timeout", timeout)
            ]
            if let token { list.append(HTTP2Header("token", token)) }
            if leader { list.append(HTTP2Header("hasleader", "true")) }
            return list
        }
        let lists = [
            request("/etcdserverpb.KV/Txn", timeout: "2999990u", token: "token.one"),
            request("/etcdserverpb.KV/Txn", timeout: "2999987u", token: "token.one"),
            // The token refreshed (the old one expired): the new one must reach the wire.
            request("/etcdserverpb.KV/Txn", timeout: "2999987u", token: "token.two"),
            request("/etcdserverpb.KV/Range", timeout: "999999u", token: "token.two"),
            request("/etcdserverpb.Watch/Watch", timeout: "1S", token: "token.two", leader: true),
            request("/etcdserverpb.KV/Txn", timeout: "2999990u", token: nil),
            request("/etcdserverpb.KV/Txn", timeout: "2999990u", token: "token.three"),
            Array(request("/etcdserverpb.KV/Txn", timeout: "3S", token: "token.three").reversed()),
            []
        ]
        for (index, list) in lists.enumerated() {
            let block = encoder.encode(list)
            #expect((block.first == 0x20) == (index == 0), "block \(index): the table size update comes first, once")
            #expect(try decoder.decode(block) == list, "block \(index)")
        }
        let again = request("/etcdserverpb.KV/Txn", timeout: "1u", token: "token.four")
        #expect(try decoder.decode(encoder.encode(again)) == again)
        var fresh = HPACKDecoder(maximumListSize: 1 << 20)
        #expect(try fresh.decode(encoder.encode(again)) == again)
    }

    func expectError(_ block: [UInt8], containing text: String, tableSize: Int = 4096, listLimit: Int = 65536) {
        var decoder = HPACKDecoder(allowedTableSize: tableSize, maximumListSize: listLimit)
        #expect(throws: HPACKError.self) { try decoder.decode(block) }
        do {
            _ = try decoder.decode(block)
        } catch {
            #expect(error.text.contains(text), "\(error.text)")
        }
    }

    @Test func hostileBlocksAreClearErrors() {
        expectError([0x80], containing: "index 0")
        expectError([0xBE], containing: "index 62, expected 1 to 61")
        expectError([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F], containing: "larger than")
        expectError([0xFF] + [UInt8](repeating: 0x80, count: 40) + [0x01], containing: "more than 5 bytes")
        expectError([0x3F, 0xE2, 0x1F], containing: "a dynamic table size update to 4097 bytes, above the 4096 bytes")
        expectError([0x82, 0x20], containing: "after a header field")
        expectError([0x04, 0x05, 0x41], containing: "only 1 left")
        // Huffman: padding of 8 ones, padding with a zero, and EOS itself.
        expectError([0x04, 0x82, 0x1F, 0xFF], containing: "bits of padding")
        expectError([0x04, 0x81, 0x00], containing: "not all ones")
        expectError([0x04, 0x84, 0xFF, 0xFF, 0xFF, 0xFF], containing: "EOS")
        // A list over the limit: one header of 100 bytes against a limit of 64.
        expectError(
            [0x04, 0x64] + [UInt8](repeating: 0x61, count: 100), containing: "header list larger than", listLimit: 64)
    }

    @Test func aTableSizeUpdateShrinksTheTableAndAnEntryLargerThanTheTableEmptiesIt() throws {
        var decoder = HPACKDecoder(maximumListSize: 65536)
        _ = try decoder.decode(Self.hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"))
        #expect(decoder.table.count == 1)
        _ = try decoder.decode([0x20])
        #expect(decoder.table.count == 0 && decoder.table.size == 0)
        _ = try decoder.decode([0x3F, 0x11])  // back to 48 bytes: smaller than the entry
        _ = try decoder.decode(Self.hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"))
        #expect(decoder.table.count == 0)
    }

    /// Random and mutated blocks: every one decodes or fails with an ``HPACKError`` — never a trap — and the
    /// decoder's table stays within its bound.
    @Test func fuzzedBlocksNeverTrapAndKeepTheTableBounded() {
        var random = SeededGenerator(seed: 7541)
        var encoder = HPACKEncoder()
        let valid = [
            Self.hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"), Self.hex("4883 640e ffc1 c0bf"),
            encoder.encode(Self.request3)
        ]
        var decoded = 0
        var failed = 0
        var decoder = HPACKDecoder(allowedTableSize: 4096, maximumListSize: 16384)
        for round in 0..<20000 {
            var block: [UInt8]
            if round % 2 == 0 {
                block = (0..<Int.random(in: 0...64, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            } else {
                block = valid[round % valid.count]
                for _ in 0..<Int.random(in: 1...4, using: &random) where !block.isEmpty {
                    block[Int.random(in: 0..<block.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            do {
                let list = try decoder.decode(block)
                decoded += 1
                #expect(list.reduce(0) { $0 + HPACKDynamicTable.size(of: $1) } <= 16384)
            } catch {
                failed += 1
                decoder = HPACKDecoder(allowedTableSize: 4096, maximumListSize: 16384)  // a connection error ends it
            }
            #expect(decoder.table.size <= 4096)
        }
        #expect(decoded > 0 && failed > 0, "decoded \(decoded), failed \(failed)")
    }
}
