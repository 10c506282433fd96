import Foundation

extension EtcdProto {
    /// One change of a key (`mvccpb.Event`): a put, or a delete (whose pair holds only the key and
    /// `mod_revision`).
    struct Event: ProtobufMessage {
        static let protobufName = "mvccpb.Event"

        /// The kind of change (`EventType`; numbers etcd may add are kept).
        struct Kind: RawRepresentable, Sendable, Equatable {
            var rawValue: Int32
            init(rawValue: Int32) { self.rawValue = rawValue }
            static let put = Kind(rawValue: 0)
            static let delete = Kind(rawValue: 1)
        }

        var type = Kind.put
        var kv: KeyValue?
        var prevKV: KeyValue?

        init() {}

        init(_ type: Kind, _ kv: KeyValue) {
            self.type = type
            self.kv = kv
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.enumeration(1, type.rawValue)
            writer.message(2, kv)
            writer.message(3, prevKV)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: type = Kind(rawValue: try reader.enumeration("type"))
            case 2: kv = try reader.message("kv", KeyValue.self)
            case 3: prevKV = try reader.message("prev_kv", KeyValue.self)
            default: try reader.skipField()
            }
        }
    }

    /// Starts watching the keys from `key` up to `rangeEnd`, from `startRevision` (0: from now).
    struct WatchCreateRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.WatchCreateRequest"

        /// An event kind the watch leaves out (`FilterType`).
        struct Filter: RawRepresentable, Sendable, Equatable {
            var rawValue: Int32
            init(rawValue: Int32) { self.rawValue = rawValue }
            static let noPut = Filter(rawValue: 0)
            static let noDelete = Filter(rawValue: 1)
        }

        var key: [UInt8] = []
        var rangeEnd: [UInt8] = []
        var startRevision: Int64 = 0
        var progressNotify = false
        var filters: [Filter] = []
        var prevKV = false
        var watchID: Int64 = 0
        var fragment = false

        init() {}

        init(key: [UInt8], rangeEnd: [UInt8] = [], startRevision: Int64 = 0, progressNotify: Bool = false) {
            self.key = key
            self.rangeEnd = rangeEnd
            self.startRevision = startRevision
            self.progressNotify = progressNotify
        }

        func encode(to writer: inout ProtobufWriter) {
            writer.bytes(1, key)
            writer.bytes(2, rangeEnd)
            writer.int64(3, startRevision)
            writer.bool(4, progressNotify)
            writer.packedEnumerations(5, filters.map(\.rawValue))
            writer.bool(6, prevKV)
            writer.int64(7, watchID)
            writer.bool(8, fragment)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: key = try reader.bytes("key")
            case 2: rangeEnd = try reader.bytes("range_end")
            case 3: startRevision = try reader.int64("start_revision")
            case 4: progressNotify = try reader.bool("progress_notify")
            case 5:
                var numbers: [Int32] = []
                try reader.enumerations("filters", into: &numbers)
                filters += numbers.map(Filter.init(rawValue:))
            case 6: prevKV = try reader.bool("prev_kv")
            case 7: watchID = try reader.int64("watch_id")
            case 8: fragment = try reader.bool("fragment")
            default: try reader.skipField()
            }
        }
    }

    /// Ends the watch `watchID`.
    struct WatchCancelRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.WatchCancelRequest"
        var watchID: Int64 = 0

        init() {}

        init(watchID: Int64) { self.watchID = watchID }

        func encode(to writer: inout ProtobufWriter) {
            writer.int64(1, watchID)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: watchID = try reader.int64("watch_id")
            default: try reader.skipField()
            }
        }
    }

    /// Asks for a progress notification (an answer with the current revision and no events); no fields.
    struct WatchProgressRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.WatchProgressRequest"

        init() {}

        func encode(to writer: inout ProtobufWriter) {}

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            try reader.skipField()
        }
    }

    /// One message a client sends on the watch stream (`request_union`, a `oneof`).
    struct WatchRequest: ProtobufMessage {
        static let protobufName = "etcdserverpb.WatchRequest"
        /// The bidirectional Watch method.
        static let path = "/etcdserverpb.Watch/Watch"

        /// What the message asks.
        enum Request: Sendable, Equatable {
            case create(WatchCreateRequest)
            case cancel(WatchCancelRequest)
            case progress
        }

        var request: Request?

        init() {}

        init(_ request: Request) { self.request = request }

        func encode(to writer: inout ProtobufWriter) {
            switch request {
            case .create(let message)?: writer.message(1, message)
            case .cancel(let message)?: writer.message(2, message)
            case .progress?: writer.message(3, WatchProgressRequest())
            case nil: break
            }
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: request = .create(try reader.message("create_request", WatchCreateRequest.self))
            case 2: request = .cancel(try reader.message("cancel_request", WatchCancelRequest.self))
            case 3:
                _ = try reader.message("progress_request", WatchProgressRequest.self)
                request = .progress
            default: try reader.skipField()
            }
        }
    }

    /// One message of the watch stream: a watch created or canceled (by a compaction: `compactRevision`), a
    /// progress notification, or events (one transaction's events arrive in one message unless `fragment`).
    struct WatchResponse: ProtobufMessage {
        static let protobufName = "etcdserverpb.WatchResponse"
        var header: ResponseHeader?
        var watchID: Int64 = 0
        var created = false
        var canceled = false
        var compactRevision: Int64 = 0
        var cancelReason = ""
        var fragment = false
        var events: [Event] = []

        init() {}

        func encode(to writer: inout ProtobufWriter) {
            writer.message(1, header)
            writer.int64(2, watchID)
            writer.bool(3, created)
            writer.bool(4, canceled)
            writer.int64(5, compactRevision)
            writer.string(6, cancelReason)
            writer.bool(7, fragment)
            writer.messages(11, events)
        }

        mutating func decodeField(_ number: Int, from reader: inout ProtobufReader) throws(ProtobufError) {
            switch number {
            case 1: header = try reader.message("header", ResponseHeader.self)
            case 2: watchID = try reader.int64("watch_id")
            case 3: created = try reader.bool("created")
            case 4: canceled = try reader.bool("canceled")
            case 5: compactRevision = try reader.int64("compact_revision")
            case 6: cancelReason = try reader.string("cancel_reason")
            case 7: fragment = try reader.bool("fragment")
            case 11: events.append(try reader.message("events", Event.self))
            default: try reader.skipField()
            }
        }
    }
}
