@testable import ObservableDefaults
import Foundation
import Testing
import TestSupport

/// Each property notifies only its own observers, whatever the source of the change; equal writes notify
/// nobody. A tracker per property fails the test both when an expected notification is missing and when an
/// unexpected one fires.
@Suite struct ObservationMatrixTests {
    typealias Property = (
        name: String, key: String, read: @Sendable (Matrix) -> Void, write: @Sendable (Matrix) -> Void,
        outside: DefaultsValue, equal: @Sendable (Matrix) -> Void
    )

    static let properties: [Property] = [
        ("a", "m_a", { _ = $0.a }, { $0.a += 1 }, .integer(42), { $0.a = $0.a }),
        ("b", "m_b", { _ = $0.b }, { $0.b += "!" }, .string("outside"), { $0.b = $0.b }),
        ("c", "m_c", { _ = $0.c }, { $0.c.append(1) }, .array([.integer(7)]), { $0.c = $0.c }),
        ("d", "m_d", { _ = $0.d }, { $0.d = ($0.d ?? 0) + 1 }, .double(2.5), { $0.d = $0.d })
    ]

    enum Source: CaseIterable { case local, otherObject, outside }

    @Test(arguments: Source.allCases)
    func onlyTheChangedPropertyNotifies(source: Source) async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        let other = Matrix(userDefaults: suite)
        let marker = OutsideMarker(suite)
        for changed in Self.properties {
            let flags = Self.properties.map { property in track { property.read(model) } }
            let onlyFlag = track { _ = model.o }
            switch source {
            case .local: changed.write(model)
            case .otherObject: changed.write(other)
            case .outside: writeOutside(suite, [changed.key: changed.outside])
            }
            let arrived = await eventually { flags[Self.properties.firstIndex { $0.name == changed.name }!].fired }
            #expect(arrived, "no notification for '\(changed.name)' after a \(source) change")
            // Local writes notify synchronously, but they also write the watched file: settling proves that
            // an outside change, or the watcher's reading of our own write, notified nobody else either.
            #expect(await marker.settle(), "marker not delivered after a \(source) change of '\(changed.name)'")
            for (index, property) in Self.properties.enumerated() where property.name != changed.name {
                #expect(
                    !flags[index].fired,
                    "unexpected notification for '\(property.name)' after a \(source) change of '\(changed.name)'")
            }
            #expect(!onlyFlag.fired, "unexpected notification for the observable-only property")
        }
    }

    @Test func equalWritesNotifyNobody() throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        model.a = 5
        let flags = Self.properties.map { property in track { property.read(model) } }
        for property in Self.properties { property.equal(model) }
        let onlyFlag = track { _ = model.o }
        model.o = model.o
        for (index, property) in Self.properties.enumerated() {
            #expect(!flags[index].fired, "equal write of '\(property.name)' notified")
        }
        #expect(!onlyFlag.fired)
    }

    @Test func observableOnlyNotifiesAndIsNotStored() throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        let flag = track { _ = model.o }
        let others = Self.properties.map { property in track { property.read(model) } }
        model.o = 3
        #expect(flag.fired)
        #expect(others.allSatisfy { !$0.fired })
        #expect(suite.value(forKey: "m_o") == nil)
        #expect(suite.value(forKey: "o") == nil)
    }

    @Test func outsideChangeOfAnUnrelatedKeyNotifiesNobody() async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        let flags = Self.properties.map { property in track { property.read(model) } }
        let marker = OutsideMarker(suite)
        writeOutside(suite, ["a": .integer(9), "unrelated": .string("x")])  // no prefix: not ours
        #expect(await marker.settle())
        #expect(flags.allSatisfy { !$0.fired })
        #expect(model.a == 1)
    }

    @Test func observationsSequenceDeliversChanges() async throws {
        let suite = try makeSuite()
        let model = Matrix(userDefaults: suite)
        let values = Observations { model.b }
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next() == "b")
        model.b = "local"
        #expect(await iterator.next() == "local")
        writeOutside(suite, ["m_b": .string("from outside")])
        #expect(await iterator.next() == "from outside")
    }
}
