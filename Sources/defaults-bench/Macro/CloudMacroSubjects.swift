import Foundation
import ObservableDefaults

/// The cloud group's propagation and fan-out class (group 9): one `Int` property, the stamp, synced through
/// etcd. `syncImmediately: true`, as an app that wants its writes out at once would declare it.
@ObservableCloud(syncImmediately: true)
final class CloudStampSettings: Sendable {
    var stamp = 0
}

/// The cloud group's read class (group 9): the same `Int` property as group 1's, on an `@ObservableCloud`
/// class (the development store: a read never touches the store or the network either way).
@ObservableCloud
final class CloudReadSettings: Sendable {
    var count = 42
}

/// The cloud group's write class (group 9): one `Int` property on the development store, under a prefix no
/// other object uses, so a write reaches no observer and nothing is uploaded or saved.
@ObservableCloud(prefix: "bench.write.")
final class CloudWriteSettings: Sendable {
    var count = 0
}
