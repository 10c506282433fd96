import Testing
@testable import ObservableDefaults

@Test func valueModelComparesDoublesByBits() {
    #expect(DefaultsValue.double(.nan) == .double(.nan))
    #expect(DefaultsValue.double(0.0) != .double(-0.0))
    #expect(DefaultsValue.integer(1) != .bool(true))
}
