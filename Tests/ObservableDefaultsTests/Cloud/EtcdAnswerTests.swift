import Foundation
import Testing
@testable import ObservableDefaults

/// Reading etcd's answers: the messages below were captured from etcd 3.4's JSON gateway (`curl` against a
/// throwaway member), so the shapes are the real ones; the etcd suites read them live too. Anything else is
/// a clear error naming the request, never a crash.
@Suite struct EtcdAnswerTests {
    private let clusterID = "15118495548433857066"  // over Int64's range: the gateway sends it as a string

    private func answer(_ text: String) throws -> EtcdAnswer {
        try EtcdAnswer(data: Data(text.utf8), context: "/v3/test at http://127.0.0.1:2379")
    }

    @Test func aWatchEventGivesKeyValueRevisionAndHeader() throws {
        let message = try answer(
            #"""
            {"result":{"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"2","raft_term":"2"},"events":[{"kv":{"key":"bnMvd29ya2Vycw==","create_revision":"2","mod_revision":"2","version":"1","value":"OA=="}}]}}
            """#)
        let result = try #require(try message.child("result"))
        #expect(try result.header().clusterID == clusterID)
        #expect(try result.header().revision == 2)
        let events = try result.children("events")
        try #require(events.count == 1)
        let pair = try #require(try events[0].child("kv")).keyValue()
        #expect(pair.key == "ns/workers")
        #expect(pair.value == Data("8".utf8))
        #expect(pair.modRevision == 2)
        #expect(events[0].string("type") == nil)  // a put: the gateway leaves the zero value out
    }

    @Test func aDeleteEventHasNoValue() throws {
        let message = try answer(
            #"""
            {"result":{"header":{"cluster_id":"15118495548433857066","revision":"3"},"events":[{"type":"DELETE","kv":{"key":"bnMvd29ya2Vycw==","mod_revision":"3"}}]}}
            """#)
        let event = try #require(try message.child("result")?.children("events").first)
        #expect(event.string("type") == "DELETE")
        let pair = try #require(try event.child("kv")).keyValue()
        #expect(pair.key == "ns/workers" && pair.value == nil && pair.modRevision == 3)
    }

    @Test func theFirstWatchMessageIsCreatedWithoutEvents() throws {
        let message = try answer(
            #"{"result":{"header":{"cluster_id":"15118495548433857066","revision":"1"},"created":true}}"#)
        let result = try #require(try message.child("result"))
        #expect(result.bool("created"))
        #expect(!result.bool("canceled"))
        #expect(try result.children("events").isEmpty)
        #expect(try result.int64("compact_revision") == 0)  // absent: zero
    }

    @Test func compareAndSwapAnswersTellWrittenFromRefused() throws {
        let written = try answer(
            #"""
            {"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"2","raft_term":"2"},"succeeded":true,"responses":[{"response_put":{"header":{"revision":"2"}}}]}
            """#)
        #expect(written.bool("succeeded"))
        #expect(try written.header().revision == 2)

        // A refused transaction without a failure branch: only the header (captured from etcd 3.4).
        let refused = try answer(
            #"{"header":{"cluster_id":"324952591200643719","member_id":"3319814642761637952","revision":"16806","raft_term":"2"}}"#
        )
        #expect(!refused.bool("succeeded"))
        #expect(try refused.header().revision == 16806)
    }

    @Test func errorsAreReadFromTheWatchAndFromRequestFailures() throws {
        let watchError = try answer(
            #"{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","http_status":"Service Unavailable"}}"#
        )
        #expect(watchError.errorMessage() == "etcdserver: no leader")
        #expect(try answer(#"{"result":{}}"#).errorMessage() == nil)

        let failure = EtcdFailure(
            status: 400,
            body: Data(
                #"{"error":"etcdserver: authentication is not enabled","message":"etcdserver: authentication is not enabled","code":9}"#
                    .utf8))
        #expect(failure.code == 9)
        #expect(failure.message == "etcdserver: authentication is not enabled")
        let unavailable = EtcdFailure(status: 503, body: Data(#"{"error":"etcdserver: no leader","code":14}"#.utf8))
        #expect(unavailable.isUnavailable && unavailable.message == "etcdserver: no leader")
        let proxy = EtcdFailure(status: 502, body: Data("<html>Bad Gateway</html>".utf8))
        #expect(proxy.code == nil && proxy.message == "HTTP 502: <html>Bad Gateway</html>" && proxy.isUnavailable)
    }

    @Test func malformedAnswersAreClearErrorsNamingTheRequest() throws {
        func message(_ text: String, _ read: (EtcdAnswer) throws -> Void = { _ in }) -> String {
            do {
                try read(try answer(text))
                return "no error"
            } catch let error as DefaultsError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        let notJSON = message("<html>Bad Gateway</html>")
        #expect(notJSON.contains("malformed answer from etcd (/v3/test at http://127.0.0.1:2379)"), "\(notJSON)")
        #expect(notJSON.contains("it is not a JSON object: <html>Bad Gateway</html>"), "\(notJSON)")
        #expect(message("[1, 2]").contains("it is not a JSON object"))
        #expect(message(#"{"header": "x"}"#) { _ = try $0.header() }.contains("'header' is not an object"))
        #expect(
            message(#"{"header": {"revision": "two"}}"#) { _ = try $0.header() }.contains(
                #"'revision' is not a decimal number: "two""#))
        #expect(
            message(#"{"events": [1]}"#) { _ = try $0.children("events") }.contains("'events' is not a list of objects")
        )
        #expect(
            message(#"{"kvs": [{"key": "not base64!"}]}"#) { _ = try $0.keyValues() }.contains("'key' is not base64"))
        let invalidKey = Data([0xFF, 0xFE]).base64EncodedString()
        #expect(
            message(#"{"kvs": [{"key": "\#(invalidKey)"}]}"#) { _ = try $0.keyValues() }.contains(
                "a key-value pair has no UTF-8 key"))
    }
}
