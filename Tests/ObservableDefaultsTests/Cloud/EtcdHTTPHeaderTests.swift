import Testing
@testable import ObservableDefaults

/// The HTTP layer's reading of header values, which decide whether a connection is kept (`Connection`) and
/// how the body is framed (`Transfer-Encoding`).
@Suite struct EtcdHTTPHeaderTests {
    @Test func headerValuesLoseTheSpacesAndTabsAroundThem() {
        #expect(EtcdHTTP.Connection.trimmed(" close") == "close")
        #expect(EtcdHTTP.Connection.trimmed("\t chunked \t") == "chunked")
        #expect(EtcdHTTP.Connection.trimmed("application/json; charset=utf-8 ") == "application/json; charset=utf-8")
        #expect(EtcdHTTP.Connection.trimmed("   ") == "")
        #expect(EtcdHTTP.Connection.trimmed("") == "")
        #expect(EtcdHTTP.Connection.trimmed(" a b ") == "a b")
    }
}
