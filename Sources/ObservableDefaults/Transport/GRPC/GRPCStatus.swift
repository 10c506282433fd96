import Foundation

/// How a gRPC call ended on the server's side: a code and the server's message (`grpc-status` and
/// `grpc-message`, or the HTTP status mapped to a code when the answer was not gRPC's).
struct GRPCStatus: Error, Sendable, Equatable, CustomStringConvertible {
    /// gRPC's status codes.
    enum Code: Int, Sendable, Equatable, CaseIterable {
        case ok = 0
        case cancelled = 1
        case unknown = 2
        case invalidArgument = 3
        case deadlineExceeded = 4
        case notFound = 5
        case alreadyExists = 6
        case permissionDenied = 7
        case resourceExhausted = 8
        case failedPrecondition = 9
        case aborted = 10
        case outOfRange = 11
        case unimplemented = 12
        case `internal` = 13
        case unavailable = 14
        case dataLoss = 15
        case unauthenticated = 16

        /// The code's name as gRPC spells it ("UNAVAILABLE").
        var name: String {
            switch self {
            case .ok: "OK"
            case .cancelled: "CANCELLED"
            case .unknown: "UNKNOWN"
            case .invalidArgument: "INVALID_ARGUMENT"
            case .deadlineExceeded: "DEADLINE_EXCEEDED"
            case .notFound: "NOT_FOUND"
            case .alreadyExists: "ALREADY_EXISTS"
            case .permissionDenied: "PERMISSION_DENIED"
            case .resourceExhausted: "RESOURCE_EXHAUSTED"
            case .failedPrecondition: "FAILED_PRECONDITION"
            case .aborted: "ABORTED"
            case .outOfRange: "OUT_OF_RANGE"
            case .unimplemented: "UNIMPLEMENTED"
            case .internal: "INTERNAL"
            case .unavailable: "UNAVAILABLE"
            case .dataLoss: "DATA_LOSS"
            case .unauthenticated: "UNAUTHENTICATED"
            }
        }

        /// The code gRPC gives an answer whose HTTP status is `status` and that carries no `grpc-status`.
        init(httpStatus status: Int) {
            switch status {
            case 400: self = .internal
            case 401: self = .unauthenticated
            case 403: self = .permissionDenied
            case 404: self = .unimplemented
            case 429, 502, 503, 504: self = .unavailable
            default: self = .unknown
            }
        }
    }

    var code: Code
    /// The server's message (percent-decoded), or one the client wrote for an HTTP status; may be empty.
    var message: String

    init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }

    /// "status 14 UNAVAILABLE: etcdserver: no leader".
    var description: String {
        "status \(code.rawValue) \(code.name)" + (message.isEmpty ? "" : ": \(message)")
    }

    /// Reads a `grpc-status` value: decimal digits of a code; a number outside gRPC's codes is ``Code/unknown``
    /// (as gRPC reads it). `nil` when the value is not a number.
    static func code(from value: String) -> Code? {
        guard !value.isEmpty, value.utf8.count <= 10, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let number = Int(value)
        else { return nil }
        return Code(rawValue: number) ?? .unknown
    }

    /// Decodes a `grpc-message` value: `%XX` is the byte XX; a `%` not followed by two hexadecimal digits
    /// stays as it is; bytes that are not UTF-8 become U+FFFD.
    static func decodeMessage(_ value: String) -> String {
        let bytes = Array(value.utf8)
        guard bytes.contains(UInt8(ascii: "%")) else { return value }
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hex(bytes[index + 1]),
                let low = hex(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}

/// Why a gRPC call failed: the transport failed (the member could not be reached, broke the connection, did
/// not answer in time, or sent an answer that breaks HTTP/2's or gRPC's rules or the client's limits), or the
/// server answered with a status other than OK.
enum GRPCFailure: Error, Sendable, CustomStringConvertible {
    /// The exchange failed; worded like the HTTP/1.1 client's failures (``EtcdHTTP/Failure/sentence(timeout:)``).
    case transport(EtcdHTTP.Failure)
    /// The server ended the call with this status.
    case status(GRPCStatus)

    var description: String {
        switch self {
        case .transport(let failure): failure.text
        case .status(let status): status.description
        }
    }

    /// The answer broke gRPC's rules: `problem` says what arrived and what was expected.
    static func malformed(_ problem: String) -> GRPCFailure {
        .transport(.malformed(problem))
    }
}
