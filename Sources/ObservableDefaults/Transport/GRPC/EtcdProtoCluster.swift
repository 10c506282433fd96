import Foundation

extension EtcdProto {
    /// Asks for a lease of `ttl` seconds (`id` 0: etcd picks the lease's ID).
    struct LeaseGrantRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.LeaseGrantRequest"
        static let path = "/etcdserverpb.Lease/LeaseGrant"
        var ttl: Int64 = 0
        var id: Int64 = 0

        init() {}

        init(ttl: Int64, id: Int64 = 0) {
            self.ttl = ttl
            self.id = id
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.int64(1, ttl)
            writer.int64(2, id)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: ttl = try reader.int64("TTL")
            case 2: id = try reader.int64("ID")
            default: try reader.skipField()
            }
        }
    }

    /// The lease granted, with its time to live in seconds.
    struct LeaseGrantResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.LeaseGrantResponse"
        var header: ResponseHeader?
        var id: Int64 = 0
        var ttl: Int64 = 0
        var error = ""

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
            writer.int64(2, id)
            writer.int64(3, ttl)
            writer.string(4, error)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            case 2: id = try reader.int64("ID")
            case 3: ttl = try reader.int64("TTL")
            case 4: error = try reader.string("error")
            default: try reader.skipField()
            }
        }
    }

    /// Logs in with a user name and password; the answer's token goes in every later call's `token`
    /// metadata.
    struct AuthenticateRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.AuthenticateRequest"
        static let path = "/etcdserverpb.Auth/Authenticate"
        var name = ""
        var password = ""

        init() {}

        init(name: String, password: String) {
            self.name = name
            self.password = password
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.string(1, name)
            writer.string(2, password)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: name = try reader.string("name")
            case 2: password = try reader.string("password")
            default: try reader.skipField()
            }
        }
    }

    /// A login's token.
    struct AuthenticateResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.AuthenticateResponse"
        var header: ResponseHeader?
        var token = ""

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
            writer.string(2, token)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            case 2: token = try reader.string("token")
            default: try reader.skipField()
            }
        }
    }

    /// Asks a member for its status (no fields).
    struct StatusRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.StatusRequest"
        static let path = "/etcdserverpb.Maintenance/Status"

        init() {}

        func encode(to writer: inout ProtobufWriter) {}

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            try reader.skipField()
        }
    }

    /// A member's status: its version, database size, the leader it knows and its raft position.
    struct StatusResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.StatusResponse"
        var header: ResponseHeader?
        var version = ""
        var dbSize: Int64 = 0
        var leader: UInt64 = 0
        var raftIndex: UInt64 = 0
        var raftTerm: UInt64 = 0
        var raftAppliedIndex: UInt64 = 0
        var errors: [String] = []
        var dbSizeInUse: Int64 = 0
        var isLearner = false

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
            writer.string(2, version)
            writer.int64(3, dbSize)
            writer.uint64(4, leader)
            writer.uint64(5, raftIndex)
            writer.uint64(6, raftTerm)
            writer.uint64(7, raftAppliedIndex)
            writer.strings(8, errors)
            writer.int64(9, dbSizeInUse)
            writer.bool(10, isLearner)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            case 2: version = try reader.string("version")
            case 3: dbSize = try reader.int64("dbSize")
            case 4: leader = try reader.uint64("leader")
            case 5: raftIndex = try reader.uint64("raftIndex")
            case 6: raftTerm = try reader.uint64("raftTerm")
            case 7: raftAppliedIndex = try reader.uint64("raftAppliedIndex")
            case 8: errors.append(try reader.string("errors"))
            case 9: dbSizeInUse = try reader.int64("dbSizeInUse")
            case 10: isLearner = try reader.bool("isLearner")
            default: try reader.skipField()
            }
        }
    }

    /// One member of the cluster, with the URLs its peers and clients reach it on.
    struct Member: ProtobufMessage {
        static let protobufName = "etcdserverpb.Member"
        var id: UInt64 = 0
        var name = ""
        var peerURLs: [String] = []
        var clientURLs: [String] = []
        var isLearner = false

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.uint64(1, id)
            writer.string(2, name)
            writer.strings(3, peerURLs)
            writer.strings(4, clientURLs)
            writer.bool(5, isLearner)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: id = try reader.uint64("ID")
            case 2: name = try reader.string("name")
            case 3: peerURLs.append(try reader.string("peerURLs"))
            case 4: clientURLs.append(try reader.string("clientURLs"))
            case 5: isLearner = try reader.bool("isLearner")
            default: try reader.skipField()
            }
        }
    }

    /// Asks for the cluster's members (no fields in etcd 3.4).
    struct MemberListRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.MemberListRequest"
        static let path = "/etcdserverpb.Cluster/MemberList"

        init() {}

        func encode(to writer: inout ProtobufWriter) {}

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            try reader.skipField()
        }
    }

    /// The cluster's members.
    struct MemberListResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.MemberListResponse"
        var header: ResponseHeader?
        var members: [Member] = []

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
            writer.messages(2, members)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            case 2: members.append(try reader.message("members", Member.self))
            default: try reader.skipField()
            }
        }
    }
}
