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
        #expect(framing(["Access-Control-Allow-Headers: accept, content-type, authorization",
                         "Access-Control-Allow-Methods: POST, GET, OPTIONS, PUT, DELETE", "Access-Control-Allow-Origin: *",
                         "Content-Type: application/json", "Grpc-Metadata-Content-Type: application/grpc",
                         "Date: Fri, 27 Nov 2026 01:24:34 GMT", "Content-Length: 128"])
            == EtcdHTTP.Connection.Framing(chunked: false, contentLength: 128, closes: false))
        #expect(framing(["transfer-encoding:\tChunked ", "CONNECTION: Close"])
            == EtcdHTTP.Connection.Framing(chunked: true, contentLength: nil, closes: true))
        #expect(framing(["Connection: keep-alive", "Content-Length: 12x", "no colon here", "Content-Lengths: 5"])
            == EtcdHTTP.Connection.Framing())
        // Only letters fold: a carriage return is not a dash.
        #expect(framing(["content\rlength: 5", "Transfer_Encoding: chunked"]) == EtcdHTTP.Connection.Framing())
        #expect(framing(["Content-Length: 5", "Content-Length: 7"]).contentLength == 7, "the last one counts, as before")
    }
}
