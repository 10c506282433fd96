import Foundation
import Testing
@testable import ObservableDefaults

/// The watch stream's split into messages, whatever pieces the connection hands over.
@Suite struct EtcdMessageLinesTests {
    /// Feeds `pieces` in order; returns the lines handed over and what is pending at the end.
    private func lines(_ pieces: [String], stopAfter limit: Int = .max) -> (
        lines: [String], pending: String, stopped: Bool
    ) {
        var splitter = EtcdMessageLines()
        var lines: [String] = []
        for piece in pieces {
            let going = splitter.take(Data(piece.utf8)) { line in
                lines.append(String(decoding: line, as: UTF8.self))
                return lines.count < limit
            }
            if !going { return (lines, String(decoding: splitter.pending, as: UTF8.self), true) }
        }
        return (lines, String(decoding: splitter.pending, as: UTF8.self), false)
    }

    @Test func wholeMessagesInOnePieceEach() {
        let result = lines(["{\"a\":1}\n", "{\"b\":2}\n"])
        #expect(result.lines == ["{\"a\":1}", "{\"b\":2}"] && result.pending.isEmpty && !result.stopped)
    }

    @Test func messagesSplitAnywhereAndSeveralInOnePiece() {
        // A large message comes as one chunk and its newline as the next; pieces may also end mid-message.
        let result = lines(["{\"a\"", ":1}", "\n", "{\"b\":2}\n{\"c\"", ":3}\n{\"d\":4", "}\n\n"])
        #expect(result.lines == ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}", "{\"d\":4}", ""])
        #expect(result.pending.isEmpty)
    }

    @Test func aLastMessageWithoutItsNewlineStaysPending() {
        let result = lines(["{\"a\":1}\n{\"error\":", "{\"code\":1}}"])
        #expect(result.lines == ["{\"a\":1}"])
        #expect(result.pending == "{\"error\":{\"code\":1}}")
    }

    @Test func handingOverStopsWhenTheHandlerSaysSo() {
        let result = lines(["{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"], stopAfter: 2)
        #expect(result.lines == ["{\"a\":1}", "{\"b\":2}"] && result.stopped)
    }

    /// The same stream cut at every position: the lines never depend on where the pieces end.
    @Test func everyCutGivesTheSameLines() {
        let stream = "{\"a\":1}\n{\"bb\":22}\n\n{\"ccc\":333}\n{\"tail\""
        let expected = lines([stream])
        for first in 0...stream.utf8.count {
            for second in first...stream.utf8.count {
                let bytes = Array(stream.utf8)
                let pieces = [bytes[..<first], bytes[first..<second], bytes[second...]].map {
                    String(decoding: $0, as: UTF8.self)
                }
                let result = lines(pieces)
                #expect(
                    result.lines == expected.lines && result.pending == expected.pending, "cut at \(first), \(second)")
            }
        }
    }
}
