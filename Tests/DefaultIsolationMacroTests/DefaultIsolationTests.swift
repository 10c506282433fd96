// This module is compiled with default isolation MainActor (`.defaultIsolation(MainActor.self)`): the class below is main-actor isolated
// without saying so, and without `defaultIsolationIsMainActor: true`.
import Dispatch
import Foundation
import ObservableDefaults
import Testing
import TestSupport

let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

@ObservableDefaults
final class ImplicitlyMainActorSettings {
    var value: Int = 0 {
        didSet { onMainQueue.append(DispatchQueue.getSpecific(key: mainQueueKey) == true) }
    }
    @ObservableOnly var onMainQueue: [Bool] = []
}

@Test func outsideChangesArriveOnTheMainActorWithoutTheFlag() async throws {
    let directory = TemporaryDirectory()
    defer { withExtendedLifetime(directory) {} }
    let suite = try DefaultsSuite(name: "isolation", directory: directory.url)
    let settings = ImplicitlyMainActorSettings(userDefaults: suite)
    settings.value = 1
    // Another process's write, simulated by replacing the file (the watcher thread delivers it).
    try HandEdit.renameOver(suite.fileURL, #"{ "value" : 2 }"#)
    #expect(await eventually { settings.value == 2 })
    #expect(settings.onMainQueue == [true, true])
}

@Test func updateRunsOnTheMainActorWithoutTheFlag() throws {
    let directory = TemporaryDirectory()
    defer { withExtendedLifetime(directory) {} }
    let suite = try DefaultsSuite(name: "isolation-update", directory: directory.url)
    let settings = ImplicitlyMainActorSettings(userDefaults: suite)
    #expect(try settings.update(\.value) { $0 + 5 } == 5)
    #expect(settings.value == 5)
    #expect(settings.onMainQueue == [true])
    #expect(suite.integer(forKey: "value") == 5)
}
