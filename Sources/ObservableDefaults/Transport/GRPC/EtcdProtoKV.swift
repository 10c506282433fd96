import Foundation

/// etcd v3's protobuf messages that the client sends and reads over gRPC, written by hand from etcd 3.4's
/// `etcdserver/etcdserverpb/rpc.proto` and `mvcc/mvccpb/kv.proto` (field numbers as there). Only the fields
/// the client uses or may meet are here; anything else on the wire is skipped when read.
///
/// Every request type names its gRPC method's path (`RangeRequest.path`: `/etcdserverpb.KV/Range`).
enum EtcdProto {}

extension EtcdProto {
    /// The header every answer carries: the cluster, the member that answered, and the store's revision.
    struct ResponseHeader: ProtobufMessage {
        static let protobufName = "etcdserverpb.ResponseHeader"
        var clusterID: UInt64 = 0
        var memberID: UInt64 = 0
        var revision: Int64 = 0
        var raftTerm: UInt64 = 0

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.uint64(1, clusterID)
            writer.uint64(2, memberID)
            writer.int64(3, revision)
            writer.uint64(4, raftTerm)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: clusterID = try reader.uint64("cluster_id")
            case 2: memberID = try reader.uint64("member_id")
            case 3: revision = try reader.int64("revision")
            case 4: raftTerm = try reader.uint64("raft_term")
            default: try reader.skipField()
            }
        }
    }

    /// A key and its value, with the revisions that created and last changed it (`mvccpb.KeyValue`).
    struct KeyValue: ProtobufMessage {
        static let protobufName = "mvccpb.KeyValue"
        var key: [UInt8] = []
        var createRevision: Int64 = 0
        var modRevision: Int64 = 0
        var version: Int64 = 0
        var value: [UInt8] = []
        var lease: Int64 = 0

        init() {}

        init(key: [UInt8], value: [UInt8] = [], createRevision: Int64 = 0, modRevision: Int64 = 0, version: Int64 = 0) {
            self.key = key
            self.value = value
            self.createRevision = createRevision
            self.modRevision = modRevision
            self.version = version
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.bytes(1, key)
            writer.int64(2, createRevision)
            writer.int64(3, modRevision)
            writer.int64(4, version)
            writer.bytes(5, value)
            writer.int64(6, lease)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: key = try reader.bytes("key")
            case 2: createRevision = try reader.int64("create_revision")
            case 3: modRevision = try reader.int64("mod_revision")
            case 4: version = try reader.int64("version")
            case 5: value = try reader.bytes("value")
            case 6: lease = try reader.int64("lease")
            default: try reader.skipField()
            }
        }
    }

    /// Reads the keys from `key` up to `rangeEnd` (a prefix: the prefix with its last byte + 1; empty: `key`
    /// alone).
    struct RangeRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.RangeRequest"
        static let path = "/etcdserverpb.KV/Range"
        var key: [UInt8] = []
        var rangeEnd: [UInt8] = []
        var limit: Int64 = 0
        var revision: Int64 = 0
        var serializable = false
        var keysOnly = false
        var countOnly = false

        init() {}

        init(key: [UInt8], rangeEnd: [UInt8] = [], limit: Int64 = 0, revision: Int64 = 0) {
            self.key = key
            self.rangeEnd = rangeEnd
            self.limit = limit
            self.revision = revision
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.bytes(1, key)
            writer.bytes(2, rangeEnd)
            writer.int64(3, limit)
            writer.int64(4, revision)
            writer.bool(7, serializable)
            writer.bool(8, keysOnly)
            writer.bool(9, countOnly)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: key = try reader.bytes("key")
            case 2: rangeEnd = try reader.bytes("range_end")
            case 3: limit = try reader.int64("limit")
            case 4: revision = try reader.int64("revision")
            case 7: serializable = try reader.bool("serializable")
            case 8: keysOnly = try reader.bool("keys_only")
            case 9: countOnly = try reader.bool("count_only")
            default: try reader.skipField()
            }
        }
    }

    /// The keys a range found (`more`: a limit left some out; `count`: how many the range holds).
    struct RangeResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.RangeResponse"
        var header: ResponseHeader?
        var kvs: [KeyValue] = []
        var more = false
        var count: Int64 = 0

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
            writer.messages(2, kvs)
            writer.bool(3, more)
            writer.int64(4, count)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            case 2: kvs.append(try reader.message("kvs", KeyValue.self))
            case 3: more = try reader.bool("more")
            case 4: count = try reader.int64("count")
            default: try reader.skipField()
            }
        }
    }

    /// Writes one key.
    struct PutRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.PutRequest"
        static let path = "/etcdserverpb.KV/Put"
        var key: [UInt8] = []
        var value: [UInt8] = []
        var lease: Int64 = 0
        var prevKV = false

        init() {}

        init(key: [UInt8], value: [UInt8], lease: Int64 = 0) {
            self.key = key
            self.value = value
            self.lease = lease
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.bytes(1, key)
            writer.bytes(2, value)
            writer.int64(3, lease)
            writer.bool(4, prevKV)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: key = try reader.bytes("key")
            case 2: value = try reader.bytes("value")
            case 3: lease = try reader.int64("lease")
            case 4: prevKV = try reader.bool("prev_kv")
            default: try reader.skipField()
            }
        }
    }

    /// A put's answer.
    struct PutResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.PutResponse"
        var header: ResponseHeader?
        var prevKV: KeyValue?

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
            writer.message(2, prevKV)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            case 2: prevKV = try reader.message("prev_kv", KeyValue.self)
            default: try reader.skipField()
            }
        }
    }

    /// Deletes the keys from `key` up to `rangeEnd`.
    struct DeleteRangeRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.DeleteRangeRequest"
        static let path = "/etcdserverpb.KV/DeleteRange"
        var key: [UInt8] = []
        var rangeEnd: [UInt8] = []
        var prevKV = false

        init() {}

        init(key: [UInt8], rangeEnd: [UInt8] = []) {
            self.key = key
            self.rangeEnd = rangeEnd
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.bytes(1, key)
            writer.bytes(2, rangeEnd)
            writer.bool(3, prevKV)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: key = try reader.bytes("key")
            case 2: rangeEnd = try reader.bytes("range_end")
            case 3: prevKV = try reader.bool("prev_kv")
            default: try reader.skipField()
            }
        }
    }

    /// How many keys a delete removed.
    struct DeleteRangeResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.DeleteRangeResponse"
        var header: ResponseHeader?
        var deleted: Int64 = 0
        var prevKVs: [KeyValue] = []

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
            writer.int64(2, deleted)
            writer.messages(3, prevKVs)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            case 2: deleted = try reader.int64("deleted")
            case 3: prevKVs.append(try reader.message("prev_kvs", KeyValue.self))
            default: try reader.skipField()
            }
        }
    }

    /// One condition of a transaction: `target` of `key` compared with a value by `result`.
    struct Compare: ProtobufMessage {
        static let protobufName = "etcdserverpb.Compare"

        /// How the key's target compares with the value (`CompareResult`; numbers etcd may add are kept).
        struct Result: RawRepresentable, Sendable, Equatable {
            var rawValue: Int32
            init(rawValue: Int32) { self.rawValue = rawValue }
            static let equal = Result(rawValue: 0)
            static let greater = Result(rawValue: 1)
            static let less = Result(rawValue: 2)
            static let notEqual = Result(rawValue: 3)
        }

        /// What of the key is compared (`CompareTarget`).
        struct Target: RawRepresentable, Sendable, Equatable {
            var rawValue: Int32
            init(rawValue: Int32) { self.rawValue = rawValue }
            static let version = Target(rawValue: 0)
            static let create = Target(rawValue: 1)
            static let mod = Target(rawValue: 2)
            static let value = Target(rawValue: 3)
            static let lease = Target(rawValue: 4)
        }

        /// The value compared with (`target_union`, a `oneof`: written even when 0).
        enum Operand: Sendable, Equatable {
            case version(Int64)
            case createRevision(Int64)
            case modRevision(Int64)
            case value([UInt8])
            case lease(Int64)
        }

        var result = Result.equal
        var target = Target.version
        var key: [UInt8] = []
        var operand: Operand?
        var rangeEnd: [UInt8] = []

        init() {}

        /// A compare of `key`'s target with `operand`, whose case names the target.
        init(key: [UInt8], _ result: Result, _ operand: Operand) {
            self.key = key
            self.result = result
            self.operand = operand
            switch operand {
            case .version: target = .version
            case .createRevision: target = .create
            case .modRevision: target = .mod
            case .value: target = .value
            case .lease: target = .lease
            }
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.enumeration(1, result.rawValue)
            writer.enumeration(2, target.rawValue)
            writer.bytes(3, key)
            switch operand {
            case .version(let number)?: writer.int64(always: 4, number)
            case .createRevision(let number)?: writer.int64(always: 5, number)
            case .modRevision(let number)?: writer.int64(always: 6, number)
            case .value(let bytes)?: writer.bytes(always: 7, bytes)
            case .lease(let number)?: writer.int64(always: 8, number)
            case nil: break
            }
            writer.bytes(64, rangeEnd)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: result = Result(rawValue: try reader.enumeration("result"))
            case 2: target = Target(rawValue: try reader.enumeration("target"))
            case 3: key = try reader.bytes("key")
            case 4: operand = .version(try reader.int64("version"))
            case 5: operand = .createRevision(try reader.int64("create_revision"))
            case 6: operand = .modRevision(try reader.int64("mod_revision"))
            case 7: operand = .value(try reader.bytes("value"))
            case 8: operand = .lease(try reader.int64("lease"))
            case 64: rangeEnd = try reader.bytes("range_end")
            default: try reader.skipField()
            }
        }
    }

    /// One operation of a transaction (`request`, a `oneof`).
    struct RequestOp: ProtobufMessage {
        static let protobufName = "etcdserverpb.RequestOp"

        /// The operation.
        enum Request: Sendable, Equatable {
            case range(RangeRequest)
            case put(PutRequest)
            case deleteRange(DeleteRangeRequest)
            case txn(TxnRequest)
        }

        var request: Request?

        init() {}

        init(_ request: Request) { self.request = request }

        func encode(to writer: inout ProtobufWriter) {
            switch request {
            case .range(let message)?: writer.message(1, message)
            case .put(let message)?: writer.message(2, message)
            case .deleteRange(let message)?: writer.message(3, message)
            case .txn(let message)?: writer.message(4, message)
            case nil: break
            }
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: request = .range(try reader.message("request_range", RangeRequest.self))
            case 2: request = .put(try reader.message("request_put", PutRequest.self))
            case 3: request = .deleteRange(try reader.message("request_delete_range", DeleteRangeRequest.self))
            case 4: request = .txn(try reader.message("request_txn", TxnRequest.self))
            default: try reader.skipField()
            }
        }
    }

    /// The answer to one operation of a transaction (`response`, a `oneof`).
    struct ResponseOp: ProtobufMessage {
        static let protobufName = "etcdserverpb.ResponseOp"

        /// The answer.
        enum Response: Sendable, Equatable {
            case range(RangeResponse)
            case put(PutResponse)
            case deleteRange(DeleteRangeResponse)
            case txn(TxnResponse)
        }

        var response: Response?

        init() {}

        init(_ response: Response) { self.response = response }

        func encode(to writer: inout ProtobufWriter) {
            switch response {
            case .range(let message)?: writer.message(1, message)
            case .put(let message)?: writer.message(2, message)
            case .deleteRange(let message)?: writer.message(3, message)
            case .txn(let message)?: writer.message(4, message)
            case nil: break
            }
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: response = .range(try reader.message("response_range", RangeResponse.self))
            case 2: response = .put(try reader.message("response_put", PutResponse.self))
            case 3: response = .deleteRange(try reader.message("response_delete_range", DeleteRangeResponse.self))
            case 4: response = .txn(try reader.message("response_txn", TxnResponse.self))
            default: try reader.skipField()
            }
        }
    }

    /// A transaction: if every compare holds, the `success` operations, else the `failure` ones, at one
    /// revision.
    struct TxnRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.TxnRequest"
        static let path = "/etcdserverpb.KV/Txn"
        var compare: [Compare] = []
        var success: [RequestOp] = []
        var failure: [RequestOp] = []

        init() {}

        init(compare: [Compare], success: [RequestOp], failure: [RequestOp] = []) {
            self.compare = compare
            self.success = success
            self.failure = failure
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.messages(1, compare)
            writer.messages(2, success)
            writer.messages(3, failure)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: compare.append(try reader.message("compare", Compare.self))
            case 2: success.append(try reader.message("success", RequestOp.self))
            case 3: failure.append(try reader.message("failure", RequestOp.self))
            default: try reader.skipField()
            }
        }
    }

    /// A transaction's answer: whether the compares held, and the answers of the operations that ran.
    struct TxnResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.TxnResponse"
        var header: ResponseHeader?
        var succeeded = false
        var responses: [ResponseOp] = []

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
            writer.bool(2, succeeded)
            writer.messages(3, responses)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            case 2: succeeded = try reader.bool("succeeded")
            case 3: responses.append(try reader.message("responses", ResponseOp.self))
            default: try reader.skipField()
            }
        }
    }

    /// Drops the history before `revision`.
    struct CompactionRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.CompactionRequest"
        static let path = "/etcdserverpb.KV/Compact"
        var revision: Int64 = 0
        var physical = false

        init() {}

        init(revision: Int64, physical: Bool = false) {
            self.revision = revision
            self.physical = physical
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.int64(1, revision)
            writer.bool(2, physical)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: revision = try reader.int64("revision")
            case 2: physical = try reader.bool("physical")
            default: try reader.skipField()
            }
        }
    }

    /// A compaction's answer.
    struct CompactionResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.CompactionResponse"
        var header: ResponseHeader?

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            default: try reader.skipField()
            }
        }
    }
}
