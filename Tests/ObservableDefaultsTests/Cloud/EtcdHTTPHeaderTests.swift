import Testing
@testable import ObservableDefaults

/// The HTTP layer's reading of header values, which decide whether a connection is kept (`Connection`) and
/// how the body is framed (`Transfer-Encoding`, `Content-Length`).
@Suite struct EtcdHTTPHeaderTests {
    @Test func headerValuesLoseTheSpacesAndTabsAroundThem() {
        #expect(EtcdHTTP.Connection.trimmed(" close") == "close")
        #expect(EtcdHTTP.Connection.trimmed("\t chunked \t") == "chunked")
        #expect(EtcdHTTP.Connection.trimmed("application/json; charset=utf-8 ") == "application/json; charset=utf-8")
        #expect(EtcdHTTP.Connection.trimmed("   ") == "")
        #expect(EtcdHTTP.Connection.trimmed("") == "")
        #expect(EtcdHTTP.Connection.trimmed(" a b ") == "a b")
    }

    @Test func theFramingHeadersAreReadInAnyCaseAndTheRestIgnored() {
        func framing(_ lines: [String]) -> EtcdHTTP.Connection.Framing {
            var framing = EtcdHTTP.Connection.Framing()
            for line in lines { framing.take(headerLine: line) }
            return framing
        }
        // The head of a `/v3/kv/txn` answer from etcd 3.4's gateway (`curl -si`).
        #expect(
            framing([
                "Access-Control-Allow-Headers: accept, content-type, authorization",
                "Access-Control-Allow-Methods: POST, GET, OPTIONS, PUT, DELETE", "Access-Control-Allow-Origin: *",
                "Content-Type: application/json", "Grpc-Metadata-Content-Type: application/grpc",
                "Date: Fri, 27 Nov 2026 01:24:34 GMT", "Content-Length: 128"
            ])
                == EtcdHTTP.Connection.Framing(chunked: false, contentLength: 128, closes: false))
        #expect(
            framing(["transfer-encoding:\tChunked ", "CONNECTION: Close"])
                == EtcdHTTP.Connection.Framing(chunked: true, contentLength: nil, closes: true))
        #expect(
            framing(["Connection: keep-alive", "no colon here", "Content-Lengths: 5"]) == EtcdHTTP.Connection.Framing())
        // Only letters fold: a carriage return is not a dash.
        #expect(framing(["content\rlength: 5", "Transfer_Encoding: chunked"]) == EtcdHTTP.Connection.Framing())
        // A length that is not a plain number, or two that disagree, make the answer unreadable (they were
        // ignored, or the last one taken: the body was then read until the connection closed, or cut short).
        #expect(
            framing(["Content-Length: 12x"]).problem == "a Content-Length of '12x', expected a decimal number of bytes")
        #expect(
            framing(["Content-Length: 5", "Content-Length: 7"]).problem
                == "two Content-Length headers, 5 and 7, expected one")
        #expect(
            framing(["Content-Length: 5", "content-length: 5"]) == EtcdHTTP.Connection.Framing(contentLength: 5),
            "the same twice is one")
        #expect(
            framing(["Transfer-Encoding: gzip, chunked"]).problem
                == "a Transfer-Encoding of 'gzip, chunked', expected chunked")
    }

    /// Every number read off the wire is checked before it is used: a sign, a blank, a letter or an overflow
    /// is no number (they crashed the process as a negative length, or were read as another number).
    @Test func contentLengthsAreDecimalDigitsOnly() {
        let length = EtcdHTTP.Connection.Framing.contentLength
        #expect(length("0") == 0 && length("128") == 128 && length("007") == 7)
        #expect(length("5, 5") == 5 && length("5,5") == 5, "a list of the same length")
        for bad in [
            "-1", "+5", "", " ", "5 5", "5, 6", "5,", "0x10", "1e3", "٣", "９", "99999999999999999999",
            "9223372036854775808"
        ] {
            #expect(length(bad) == nil, "'\(bad)'")
        }
        #expect(
            length("9223372036854775807") == Int.max, "the largest that fits is read (and then refused by the limit)")
    }

    @Test func chunkSizesAreHexadecimalDigitsWithOptionalExtensions() {
        let size = EtcdHTTP.Connection.chunkSize
        #expect(size("0") == 0 && size("1a") == 26 && size("1A") == 26 && size("00000000000000000010") == 16)
        #expect(size("5;name=value") == 5 && size("5 ; name") == 5 && size("5\t") == 5 && size("5;a=\"b c\"") == 5)
        #expect(size("7fffffffffffffff") == Int.max)
        for bad in [
            "-5", "+5", "", " 5", "0x5", "5x", "5 xyz", "5;", "5; ", "5;\u{0}", "5;é", "8000000000000000",
            "fffffffffffffffff"
        ] {
            #expect(size(bad) == nil, "'\(bad)'")
        }
    }

    @Test func statusLinesAreHTTP1WithAThreeDigitStatus() {
        let status = EtcdHTTP.Connection.status
        #expect(
            status("HTTP/1.1 200 OK") == 200 && status("HTTP/1.0 404 Not Found") == 404 && status("HTTP/1.1 503") == 503
        )
        #expect(status("HTTP/1.1 100 Continue") == 100 && status("HTTP/1.1 599 ") == 599)
        for bad in [
            "HTTP/1.1 -200 OK", "HTTP/1.1 +200 OK", "HTTP/1.1 2000 OK", "HTTP/1.1 20 OK", "HTTP/1.1 099 X",
            "HTTP/1.1 600 X",
            "HTTP/2 200", "HTTP/1.1  200 OK", "HTTP/1.1 2a0 OK", "HTTP/1.1 200OK", "ICY 200 OK", ""
        ] {
            #expect(status(bad) == nil, "'\(bad)'")
        }
    }
}
