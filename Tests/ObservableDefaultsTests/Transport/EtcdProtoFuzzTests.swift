import Foundation
import Testing
@testable import ObservableDefaults
import TestSupport

/// Random bytes and mutated valid encodings through every etcd message decoder and the gRPC message reader:
/// none crashes, what decodes reads the same after writing it again, what is refused is refused with an
/// error naming the message and an offset inside the input, and nothing decoded is larger than its input
/// allows.
@Suite struct EtcdProtoFuzzTests {
    static let rounds = 400

    /// Applies one random mutation to `bytes`: a byte replaced, inserted or deleted, a run cut out or
    /// repeated, or a varint-looking run of 0xFF inserted.
    static func mutate(_ bytes: inout [UInt8], _ random: inout SeededGenerator) {
        let position = Int.random(in: 0...bytes.count, using: &random)
        let interesting: [UInt8] = [0x00, 0x01, 0x02, 0x07, 0x08, 0x0A, 0x0B, 0x0C, 0x12, 0x7F, 0x80, 0xFF]
        let byte =
            Bool.random(using: &random)
            ? interesting[Int.random(in: 0..<interesting.count, using: &random)]
            : UInt8.random(in: 0...255, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0 where position < bytes.count: bytes[position] = byte
        case 1: bytes.insert(byte, at: position)
        case 2 where position < bytes.count: bytes.remove(at: position)
        case 3:
            let end = min(bytes.count, position + Int.random(in: 1...8, using: &random))
            bytes.removeSubrange(position..<end)
        case 4:
            let end = min(bytes.count, position + Int.random(in: 1...16, using: &random))
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        default:
            bytes.insert(
                contentsOf: [UInt8](repeating: 0xFF, count: Int.random(in: 1...11, using: &random)), at: position)
        }
    }

    @Test func everyDecoderSurvivesRandomAndMutatedBytes() throws {
        var random = SeededGenerator(seed: 0x31_0E7C)
        var refused = 0
        var accepted = 0
        for sample in EtcdProtoSamples.all {
            let name = type(of: sample.message).protobufName
            let valid = sample.message.encoded()
            for round in 0..<Self.rounds {
                var bytes: [UInt8]
                if round % 4 == 0 {
                    bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in
                        UInt8.random(in: 0...255, using: &random)
                    }
                } else {
                    bytes = valid
                    for _ in 0..<Int.random(in: 1...4, using: &random) { Self.mutate(&bytes, &random) }
                }
                do {
                    let decoded = try sample.decode(bytes)
                    accepted += 1
                    // What decodes is bounded by what was read: written out again it takes at most twice the
                    // bytes (an enum read from a 5-byte varint is written sign-extended in 10), and it reads
                    // back to the same message.
                    let again = decoded.encoded()
                    #expect(again.count <= 2 * bytes.count + 8, "\(name)")
                    let reread = try sample.decode(again)
                    #expect(reread.isEqual(to: decoded), "\(name): \(bytes)")
                } catch {
                    refused += 1
                    #expect(!error.message.isEmpty)
                    #expect(error.offset >= 0 && error.offset <= bytes.count, "\(error)")
                    #expect(!error.problem.isEmpty)
                    #expect(error.description.hasPrefix("protobuf message "))
                }
            }
        }
        // Both paths were taken for a fair share of the inputs.
        #expect(refused > EtcdProtoSamples.all.count * Self.rounds / 10)
        #expect(accepted > EtcdProtoSamples.all.count * Self.rounds / 20)
    }

    /// Deeply nested transactions and long runs of empty repeated messages stay within the limits.
    @Test func nestingAndRepetitionAreBounded() {
        // 10,000 levels of RequestOp → TxnRequest built from the inside out: refused at the depth limit,
        // without recursion past it.
        var bytes: [UInt8] = []
        for level in 0..<10_000 {
            var writer = ProtobufWriter()
            writer.bytes(always: level % 2 == 0 ? 2 : 4, bytes)
            bytes = writer.bytes
        }
        let error = ProtobufTestFields.error(EtcdProto.RequestOp.self, bytes)
        #expect(error?.problem.contains("nested more than 100 deep") == true)

        // 100,000 empty key-values in 200 KB: each decoded once, count matches; with limits for answers of
        // 400 KB (50,000 nested messages), refused at the 50,001st.
        let many = [UInt8]([0x12, 0x00]).repeated(100_000)
        let answer = try? EtcdProto.RangeResponse(decoding: many)
        #expect(answer?.kvs.count == 100_000)
        let refused = ProtobufTestFields.error(
            EtcdProto.RangeResponse.self, many, limits: ProtobufReader.Limits(answerBytes: 400_000))
        #expect(refused?.problem == "the message holds more than 50000 nested messages")
        #expect(refused?.offset == 100_000)
    }

    /// The gRPC message reader, fed random pieces of valid and mutated streams: messages come out whole and
    /// in order, or the reader refuses with a precise reason; it never holds more than the limit.
    @Test func grpcMessageReaderSurvivesRandomStreams() {
        var random = SeededGenerator(seed: 0x0031_F4A3)
        let limit = 256
        var refusedCompressed = 0
        var refusedLength = 0
        var completed = 0
        for round in 0..<2_000 {
            let messages: [[UInt8]] = (0..<Int.random(in: 0...5, using: &random)).map { _ in
                (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            }
            var stream = messages.flatMap { GRPCScript.frame($0) }
            if round % 2 == 1 {
                for _ in 0..<Int.random(in: 1...3, using: &random) { Self.mutate(&stream, &random) }
            }
            var reader = GRPCMessageReader(limit: limit)
            var received: [[UInt8]] = []
            var rest = stream[...]
            do {
                while !rest.isEmpty {
                    // Small pieces cut messages anywhere; large ones also bring several whole at once.
                    let piece = rest.prefix(Int.random(in: 1...(round % 4 < 2 ? 40 : 700), using: &random))
                    rest = rest.dropFirst(piece.count)
                    received += try reader.append(piece)
                }
                completed += 1
                #expect(received.allSatisfy { $0.count <= limit })
                #expect(received.reduce(0) { $0 + $1.count + 5 } + (reader.isInsideMessage ? 1 : 0) <= stream.count)
                if round % 2 == 0 {
                    #expect(received == messages)
                    #expect(!reader.isInsideMessage)
                }
            } catch {
                guard case .transport(let failure) = error else {
                    Issue.record("the reader threw a status: \(error)")
                    continue
                }
                #expect(failure.malformed)
                if failure.tooLarge {
                    refusedLength += 1
                    #expect(failure.text.contains("larger than 256 bytes (its prefix announces"))
                } else {
                    refusedCompressed += 1
                    #expect(failure.text.contains("compressed"))
                }
                if round % 2 == 0 { #expect(messages.contains { $0.count > limit }) }
            }
        }
        #expect(completed > 100 && refusedLength > 100 && refusedCompressed > 10)
    }
}

extension Array {
    /// The array repeated `count` times.
    fileprivate func repeated(_ count: Int) -> [Element] {
        [Element]([[Element]](repeating: self, count: count).joined())
    }
}
