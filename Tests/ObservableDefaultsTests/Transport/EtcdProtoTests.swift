import Foundation
import Testing
@testable import ObservableDefaults

/// etcd's protobuf messages: encodings computed by hand from the protobuf spec and etcd 3.4's `rpc.proto`,
/// round trips of every message, unknown fields of every wire type skipped, and malformed bytes refused with
/// an error naming the message, field and offset.
@Suite struct EtcdProtoTests {
    /// A range over the prefix "a/" (range end "a0") at revision 300.
    @Test func rangeRequestWithPrefixEncodesByHand() throws {
        let request = EtcdProto.RangeRequest(key: Array("a/".utf8), rangeEnd: Array("a0".utf8), revision: 300)
        // key (1, length-delimited): 0x0A, 2, "a/"; range_end (2): 0x12, 2, "a0"; revision (4, varint): 0x20,
        // 300 = 0b10_0101100 → 0xAC 0x02.
        #expect(request.encoded() == [0x0A, 0x02, 0x61, 0x2F, 0x12, 0x02, 0x61, 0x30, 0x20, 0xAC, 0x02])
        #expect(try EtcdProto.RangeRequest(decoding: request.encoded()) == request)
    }

    /// A compare-and-swap: mod_revision of "k" EQUAL 0 (a `oneof` member, so field 6 is on the wire though
    /// 0), put "k"="v" on success, range "k" on failure.
    @Test func transactionWithModCompareOfZeroEncodesByHand() throws {
        let request = EtcdProto.TxnRequest(
            compare: [EtcdProto.Compare(key: [0x6B], .equal, .modRevision(0))],
            success: [EtcdProto.RequestOp(.put(EtcdProto.PutRequest(key: [0x6B], value: [0x76])))],
            failure: [EtcdProto.RequestOp(.range(EtcdProto.RangeRequest(key: [0x6B])))])
        // Compare: result EQUAL (0) left out; target MOD (2): 0x10 0x02; key: 0x1A 0x01 "k";
        // mod_revision (6): 0x30 0x00.
        let compare: [UInt8] = [0x10, 0x02, 0x1A, 0x01, 0x6B, 0x30, 0x00]
        // PutRequest: key 0x0A 0x01 "k", value 0x12 0x01 "v"; in RequestOp field 2 (request_put).
        let success: [UInt8] = [0x12, 0x06, 0x0A, 0x01, 0x6B, 0x12, 0x01, 0x76]
        // RangeRequest: key 0x0A 0x01 "k"; in RequestOp field 1 (request_range).
        let failure: [UInt8] = [0x0A, 0x03, 0x0A, 0x01, 0x6B]
        let expected = [0x0A, 0x07] + compare + [0x12, 0x08] + success + [0x1A, 0x05] + failure
        #expect(request.encoded() == expected)
        let decoded = try EtcdProto.TxnRequest(decoding: expected)
        #expect(decoded == request)
        #expect(decoded.compare.first?.operand == .modRevision(0))
        #expect(decoded.compare.first?.target == .mod)
    }

    /// A watch of the prefix "a/" from revision 1000 with progress notifications, inside a WatchRequest.
    @Test func watchCreateRequestEncodesByHand() throws {
        let create = EtcdProto.WatchCreateRequest(
            key: Array("a/".utf8), rangeEnd: Array("a0".utf8), startRevision: 1000, progressNotify: true)
        // key 0x0A 2 "a/"; range_end 0x12 2 "a0"; start_revision (3): 0x18, 1000 = 0b111_1101000 → 0xE8 0x07;
        // progress_notify (4): 0x20 0x01. 13 bytes, inside WatchRequest field 1: 0x0A 0x0D.
        let inner: [UInt8] = [0x0A, 0x02, 0x61, 0x2F, 0x12, 0x02, 0x61, 0x30, 0x18, 0xE8, 0x07, 0x20, 0x01]
        #expect(create.encoded() == inner)
        #expect(EtcdProto.WatchRequest(.create(create)).encoded() == [0x0A, 0x0D] + inner)
        // A progress request and a cancel of watch 0 are present though empty.
        #expect(EtcdProto.WatchRequest(.progress).encoded() == [0x1A, 0x00])
        #expect(EtcdProto.WatchRequest(.cancel(EtcdProto.WatchCancelRequest(watchID: 0))).encoded() == [0x12, 0x00])
        // Filters are packed (field 5, length-delimited); a reader takes the unpacked form too.
        var filtered = EtcdProto.WatchCreateRequest(key: [0x6B])
        filtered.filters = [.noPut, .noDelete]
        #expect(filtered.encoded() == [0x0A, 0x01, 0x6B, 0x2A, 0x02, 0x00, 0x01])
        let unpacked = try EtcdProto.WatchCreateRequest(decoding: [0x0A, 0x01, 0x6B, 0x28, 0x00, 0x28, 0x01])
        #expect(unpacked == filtered)
    }

    /// Negative numbers take ten bytes; a put with a negative lease round-trips.
    @Test func negativeNumbersTakeTenBytes() throws {
        var writer = ProtobufWriter()
        writer.int64(3, -1)
        #expect(writer.bytes == [0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
        let put = EtcdProto.PutRequest(key: [1], value: [], lease: -5)
        #expect(try EtcdProto.PutRequest(decoding: put.encoded()) == put)
    }

    /// A watch answer built by hand (header, created, one put event) reads to the expected values.
    @Test func watchResponseDecodesFromHandWrittenBytes() throws {
        // header (1): revision (3) 7 → 0x18 0x07; watch_id (2) 1; created (3) true;
        // event (11 → tag 0x5A): type PUT left out, kv (2): key "k", mod_revision (3) 7, value "v".
        let kv: [UInt8] = [0x0A, 0x01, 0x6B, 0x18, 0x07, 0x2A, 0x01, 0x76]
        let event: [UInt8] = [0x12, UInt8(kv.count)] + kv
        let bytes: [UInt8] = [0x0A, 0x02, 0x18, 0x07, 0x10, 0x01, 0x18, 0x01, 0x5A, UInt8(event.count)] + event
        let answer = try EtcdProto.WatchResponse(decoding: bytes)
        #expect(answer.header?.revision == 7)
        #expect(answer.watchID == 1)
        #expect(answer.created)
        #expect(answer.events.count == 1)
        #expect(answer.events.first?.type == .put)
        #expect(answer.events.first?.kv == EtcdProto.KeyValue(key: [0x6B], value: [0x76], modRevision: 7))
    }

    /// Nested messages are written in place, their length's varint widened once they pass 127 bytes: a
    /// transaction whose put carries values of every length class (one to four varint bytes) writes the
    /// same bytes as writing each nested message on its own and reads back equal.
    @Test func nestedMessagesOfEveryLengthClassEncodeAsWrittenOnTheirOwn() throws {
        func field(_ number: UInt64, _ payload: [UInt8]) -> [UInt8] {
            var writer = ProtobufWriter()
            writer.bytes(always: Int(number), payload)
            return writer.bytes
        }
        for count in [0, 1, 100, 118, 119, 120, 127, 128, 200, 16_370, 16_384, 70_000, 2_100_000] {
            let put = EtcdProto.PutRequest(key: Array("ns/key".utf8), value: [UInt8](repeating: 0x61, count: count))
            let compare = EtcdProto.Compare(key: Array("ns/key".utf8), .equal, .modRevision(0))
            let request = EtcdProto.TxnRequest(compare: [compare], success: [EtcdProto.RequestOp(.put(put))])
            let expected = field(1, compare.encoded()) + field(2, field(2, put.encoded()))
            #expect(request.encoded() == expected, "a put of \(count) bytes")
            #expect(
                try EtcdProto.TxnRequest(decoding: request.encoded(), limits: .init(answerBytes: 4 << 20)) == request)
        }
    }

    /// Every message, with every field set, reads back equal after writing.
    @Test func everyMessageRoundTrips() throws {
        for sample in EtcdProtoSamples.all {
            let decoded = try sample.decode(sample.message.encoded())
            #expect(decoded.isEqual(to: sample.message), "\(type(of: sample.message).protobufName)")
            // Also from Data.
            let fromData = try sample.decode(Array(sample.message.encodedData()))
            #expect(fromData.isEqual(to: sample.message))
        }
        #expect(EtcdProtoSamples.all.count >= 33)
    }

    /// Unknown fields of every wire type, between and around every known field, are skipped.
    @Test func unknownFieldsOfEveryWireTypeAreSkipped() throws {
        for sample in EtcdProtoSamples.all {
            let fields = ProtobufTestFields.split(sample.message.encoded())
            var mixed: [UInt8] = ProtobufTestFields.unknownFields(seed: 0)
            for (index, field) in fields.enumerated() {
                mixed += field + ProtobufTestFields.unknownFields(seed: index + 1)
            }
            let decoded = try sample.decode(mixed)
            #expect(decoded.isEqual(to: sample.message), "\(type(of: sample.message).protobufName)")
        }
    }

    /// Malformed bytes are refused with an error naming the message, the field and the offset.
    @Test func malformedBytesAreRefusedPrecisely() {
        func error(_ bytes: [UInt8]) -> ProtobufError? {
            do {
                _ = try EtcdProto.RangeResponse(decoding: bytes)
                return nil
            } catch { return error }
        }
        // kvs (2) announces 5 bytes, 2 follow.
        let cut = error([0x12, 0x05, 0x0A, 0x01])
        #expect(cut?.message == "etcdserverpb.RangeResponse")
        #expect(cut?.field == 2)
        #expect(cut?.fieldName == "kvs")
        #expect(cut?.description.contains("length 5 is more than the 2 bytes left") == true)
        // A group (field 2, wire type 3).
        #expect(error([0x13])?.problem.contains("groups") == true)
        // Wire type 6 does not exist.
        #expect(error([0x0E])?.problem.contains("wire type 6") == true)
        // Field number 0.
        #expect(error([0x00, 0x01])?.problem.contains("field number 0") == true)
        // An 11-byte varint, and one whose 10th byte overflows 64 bits.
        #expect(error([0x20] + [UInt8](repeating: 0xFF, count: 10) + [0x01])?.problem.contains("64 bits") == true)
        #expect(error([0x20] + [UInt8](repeating: 0x80, count: 9) + [0x02])?.problem.contains("64 bits") == true)
        // A varint cut off.
        #expect(error([0x20, 0x80])?.problem.contains("cut off") == true)
        // more (3) sent as length-delimited: the wrong wire type.
        let wrongType = error([0x1A, 0x00])
        #expect(wrongType?.fieldName == "more")
        #expect(wrongType?.problem.contains("expected wire type 0") == true)
        // A fault inside a nested key-value names the nested message and the offset in the outer bytes.
        let nested = error([0x12, 0x02, 0x18, 0x80])
        #expect(nested?.message == "mvccpb.KeyValue")
        #expect(nested?.fieldName == "mod_revision")
        #expect(nested?.offset == 3)
        // A string that is not UTF-8.
        #expect(
            (try? EtcdProto.WatchResponse(decoding: [0x32, 0x02, 0xC3, 0x28])) == nil
                && ProtobufTestFields.error(EtcdProto.WatchResponse.self, [0x32, 0x02, 0xC3, 0x28])?.problem
                    .contains("UTF-8") == true
        )
    }

    /// Lengths over the field limit, and nesting past the depth limit, are refused.
    @Test func limitsOnLengthAndDepthHold() {
        let limits = ProtobufReader.Limits(fieldBytes: 4, depth: 3)
        let long = EtcdProto.KeyValue(key: [1, 2, 3, 4, 5]).encoded()
        let tooLong = ProtobufTestFields.error(EtcdProto.KeyValue.self, long, limits: limits)
        #expect(tooLong?.problem.contains("more than the 4 bytes a field may have") == true)
        #expect(tooLong?.fieldName == "key")
        // A transaction inside a transaction inside a transaction: depth 4 (RequestOp and TxnRequest alternate).
        var request = EtcdProto.TxnRequest()
        for _ in 0..<3 { request = EtcdProto.TxnRequest(compare: [], success: [EtcdProto.RequestOp(.txn(request))]) }
        let deep = ProtobufTestFields.error(
            EtcdProto.TxnRequest.self, request.encoded(), limits: ProtobufReader.Limits(fieldBytes: 100, depth: 3))
        #expect(deep?.problem.contains("nested more than 3 deep") == true)
        #expect(
            (try? EtcdProto.TxnRequest(
                decoding: request.encoded(), limits: ProtobufReader.Limits(fieldBytes: 100, depth: 7))) == request)
    }
}

/// A message and the decoder of its type, so tests can go over every message.
struct EtcdProtoSample: Sendable {
    let message: any ProtobufMessage
    let decode: @Sendable ([UInt8]) throws(ProtobufError) -> any ProtobufMessage

    init<M: ProtobufMessage>(_ message: M) {
        self.message = message
        self.decode = { (bytes: [UInt8]) throws(ProtobufError) -> any ProtobufMessage in try M(decoding: bytes) }
    }
}

extension ProtobufMessage {
    /// Whether `other` is the same type and equal.
    func isEqual(to other: any ProtobufMessage) -> Bool {
        (other as? Self) == self
    }
}

/// One sample of every etcd message, with every field set to a value that is not its zero.
enum EtcdProtoSamples {
    static let header: EtcdProto.ResponseHeader = {
        var header = EtcdProto.ResponseHeader()
        header.clusterID = 0xFEDC_BA98_7654_3210
        header.memberID = 42
        header.revision = 605
        header.raftTerm = 3
        return header
    }()

    static let keyValue: EtcdProto.KeyValue = {
        var pair = EtcdProto.KeyValue(
            key: Array("ns/key".utf8), value: [0, 0xFF, 7], createRevision: 3, modRevision: 605, version: 9)
        pair.lease = 0x1234
        return pair
    }()

    static let range: EtcdProto.RangeRequest = {
        var request = EtcdProto.RangeRequest(key: [1], rangeEnd: [2], limit: 10, revision: 600)
        request.serializable = true
        request.keysOnly = true
        request.countOnly = true
        return request
    }()

    static let rangeAnswer: EtcdProto.RangeResponse = {
        var answer = EtcdProto.RangeResponse()
        answer.header = header
        answer.kvs = [keyValue, EtcdProto.KeyValue(key: [9])]
        answer.more = true
        answer.count = 2
        return answer
    }()

    static let put: EtcdProto.PutRequest = {
        var request = EtcdProto.PutRequest(key: [1, 2], value: Array("value".utf8), lease: 77)
        request.prevKV = true
        return request
    }()

    static let putAnswer: EtcdProto.PutResponse = {
        var answer = EtcdProto.PutResponse()
        answer.header = header
        answer.prevKV = keyValue
        return answer
    }()

    static let delete: EtcdProto.DeleteRangeRequest = {
        var request = EtcdProto.DeleteRangeRequest(key: [1], rangeEnd: [2])
        request.prevKV = true
        return request
    }()

    static let deleteAnswer: EtcdProto.DeleteRangeResponse = {
        var answer = EtcdProto.DeleteRangeResponse()
        answer.header = header
        answer.deleted = 2
        answer.prevKVs = [keyValue, keyValue]
        return answer
    }()

    static let compares: [EtcdProto.Compare] = {
        var withRange = EtcdProto.Compare(key: [3], .notEqual, .value([]))
        withRange.rangeEnd = [4]
        return [
            EtcdProto.Compare(key: [1], .equal, .modRevision(0)),
            EtcdProto.Compare(key: [1], .greater, .createRevision(5)),
            EtcdProto.Compare(key: [1], .less, .version(-1)),
            EtcdProto.Compare(key: [1], .equal, .lease(8)),
            withRange
        ]
    }()

    static let txn = EtcdProto.TxnRequest(
        compare: compares,
        success: [
            EtcdProto.RequestOp(.put(put)), EtcdProto.RequestOp(.deleteRange(delete)),
            EtcdProto.RequestOp(.txn(EtcdProto.TxnRequest(compare: [], success: [EtcdProto.RequestOp(.range(range))])))
        ],
        failure: [EtcdProto.RequestOp(.range(range)), EtcdProto.RequestOp()])

    static let txnAnswer: EtcdProto.TxnResponse = {
        var inner = EtcdProto.TxnResponse()
        inner.responses = [EtcdProto.ResponseOp(.range(rangeAnswer))]
        var answer = EtcdProto.TxnResponse()
        answer.header = header
        answer.succeeded = true
        answer.responses = [
            EtcdProto.ResponseOp(.range(rangeAnswer)), EtcdProto.ResponseOp(.put(putAnswer)),
            EtcdProto.ResponseOp(.deleteRange(deleteAnswer)), EtcdProto.ResponseOp(.txn(inner))
        ]
        return answer
    }()

    static let compactionAnswer: EtcdProto.CompactionResponse = {
        var answer = EtcdProto.CompactionResponse()
        answer.header = header
        return answer
    }()

    static let watchCreate: EtcdProto.WatchCreateRequest = {
        var request = EtcdProto.WatchCreateRequest(key: [1], rangeEnd: [2], startRevision: 606, progressNotify: true)
        request.filters = [.noDelete, .noPut]
        request.prevKV = true
        request.watchID = 5
        request.fragment = true
        return request
    }()

    static let event: EtcdProto.Event = {
        var event = EtcdProto.Event(.delete, EtcdProto.KeyValue(key: [1], modRevision: 607))
        event.prevKV = keyValue
        return event
    }()

    static let watchAnswer: EtcdProto.WatchResponse = {
        var answer = EtcdProto.WatchResponse()
        answer.header = header
        answer.watchID = 5
        answer.created = true
        answer.canceled = true
        answer.compactRevision = 500
        answer.cancelReason = "mvcc: required revision has been compacted — ✓"
        answer.fragment = true
        answer.events = [event, EtcdProto.Event(.put, keyValue)]
        return answer
    }()

    static let leaseAnswer: EtcdProto.LeaseGrantResponse = {
        var answer = EtcdProto.LeaseGrantResponse()
        answer.header = header
        answer.id = 99
        answer.ttl = 60
        answer.error = "none"
        return answer
    }()

    static let authAnswer: EtcdProto.AuthenticateResponse = {
        var answer = EtcdProto.AuthenticateResponse()
        answer.header = header
        answer.token = "token.123"
        return answer
    }()

    static let statusAnswer: EtcdProto.StatusResponse = {
        var answer = EtcdProto.StatusResponse()
        answer.header = header
        answer.version = "3.4.23"
        answer.dbSize = 20480
        answer.leader = 42
        answer.raftIndex = 10
        answer.raftTerm = 2
        answer.raftAppliedIndex = 10
        answer.errors = ["NOSPACE", ""]
        answer.dbSizeInUse = 16384
        answer.isLearner = true
        return answer
    }()

    static let member: EtcdProto.Member = {
        var member = EtcdProto.Member()
        member.id = 0xFFFF_FFFF_FFFF_FFFF
        member.name = "node-1"
        member.peerURLs = ["http://127.0.0.1:2380"]
        member.clientURLs = ["http://127.0.0.1:2379", "http://[::1]:2379"]
        member.isLearner = true
        return member
    }()

    static let memberListAnswer: EtcdProto.MemberListResponse = {
        var answer = EtcdProto.MemberListResponse()
        answer.header = header
        answer.members = [member, EtcdProto.Member()]
        return answer
    }()

    static let all: [EtcdProtoSample] = [
        EtcdProtoSample(header), EtcdProtoSample(keyValue), EtcdProtoSample(range), EtcdProtoSample(rangeAnswer),
        EtcdProtoSample(put), EtcdProtoSample(putAnswer), EtcdProtoSample(delete), EtcdProtoSample(deleteAnswer),
        EtcdProtoSample(compares[0]), EtcdProtoSample(compares[4]), EtcdProtoSample(EtcdProto.RequestOp(.put(put))),
        EtcdProtoSample(EtcdProto.ResponseOp(.put(putAnswer))), EtcdProtoSample(txn), EtcdProtoSample(txnAnswer),
        EtcdProtoSample(EtcdProto.CompactionRequest(revision: 500, physical: true)), EtcdProtoSample(compactionAnswer),
        EtcdProtoSample(EtcdProto.WatchRequest(.create(watchCreate))),
        EtcdProtoSample(EtcdProto.WatchRequest(.cancel(EtcdProto.WatchCancelRequest(watchID: 5)))),
        EtcdProtoSample(EtcdProto.WatchRequest(.progress)), EtcdProtoSample(watchCreate),
        EtcdProtoSample(EtcdProto.WatchCancelRequest(watchID: 5)), EtcdProtoSample(EtcdProto.WatchProgressRequest()),
        EtcdProtoSample(watchAnswer), EtcdProtoSample(event),
        EtcdProtoSample(EtcdProto.LeaseGrantRequest(ttl: 60, id: 9)),
        EtcdProtoSample(leaseAnswer),
        EtcdProtoSample(EtcdProto.AuthenticateRequest(name: "root", password: "pässword")),
        EtcdProtoSample(authAnswer), EtcdProtoSample(EtcdProto.StatusRequest()), EtcdProtoSample(statusAnswer),
        EtcdProtoSample(EtcdProto.MemberListRequest()), EtcdProtoSample(memberListAnswer), EtcdProtoSample(member)
    ]
}

/// Helpers that take protobuf bytes apart, for tests.
enum ProtobufTestFields {
    /// The top-level fields of a valid encoding, each as its bytes (tag and value).
    static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        var fields: [[UInt8]] = []
        var position = 0
        func varint() -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = bytes[position]
                position += 1
                value |= UInt64(byte & 0x7F) << shift
                shift += 7
                if byte & 0x80 == 0 { return value }
            }
        }
        while position < bytes.count {
            let start = position
            let tag = varint()
            switch tag & 7 {
            case 0: _ = varint()
            case 1: position += 8
            case 5: position += 4
            default: position += Int(varint())
            }
            fields.append(Array(bytes[start..<position]))
        }
        return fields
    }

    /// Fields numbered from 1000 (no etcd message has them) of every wire type a reader must skip: a
    /// varint, fixed64, a length-delimited field (with bytes that would be a group if read as fields), and
    /// fixed32.
    static func unknownFields(seed: Int) -> [UInt8] {
        var writer = ProtobufWriter()
        writer.writeTag(1000 + seed, .varint)
        writer.writeVarint(UInt64.max - UInt64(seed))
        writer.fixed64(2000 + seed, 0x0807_0605_0403_0201 &+ UInt64(seed))
        writer.bytes(always: 3000 + seed, [0x0B, 0x0C, 0xFF, UInt8(seed & 0xFF)])
        writer.fixed32(536_870_911, 0xFCFD_FEFF)
        return writer.bytes
    }

    /// The error decoding `bytes` as `M` throws, `nil` when it decodes.
    static func error<M: ProtobufMessage>(_ type: M.Type, _ bytes: [UInt8], limits: ProtobufReader.Limits = .standard)
        -> ProtobufError?
    {
        do {
            _ = try M(decoding: bytes, limits: limits)
            return nil
        } catch { return error }
    }
}
