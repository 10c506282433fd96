import EtcdLauncher
import Foundation
import Testing

/// The real etcd node the tool's cloud tests share (each test uses its own namespace).
///
/// Tests carry ``ToolEtcd/required``: without an `etcd` binary they are skipped with the install command,
/// except under `CI=true`, where they run and fail (the same rule as the library's cloud tests).
enum ToolEtcd {
    static let shouldRun = EtcdBinary.find() != nil || ProcessInfo.processInfo.environment["CI"] == "true"

    static var required: ConditionTrait {
        .enabled(
            if: shouldRun,
            "etcd is not installed; install it with `\(EtcdBinary.installCommand)` to run the cloud tests")
    }

    private static let shared: Result<EtcdNode, any Error> = Result { try EtcdNode() }

    /// The shared node's client URL (throws when etcd is missing or does not start).
    static func endpoint() throws -> URL { try shared.get().endpoint }

    /// `etcd://127.0.0.1:PORT/NAMESPACE` for a namespace no other test uses.
    static func freshAddress(_ label: String = #function) throws -> String {
        let endpoint = try endpoint()
        return
            "etcd://\(endpoint.host!):\(endpoint.port!)/tool-\(label.filter { $0.isLetter })-\(UInt32.random(in: 0 ... .max))"
    }
}
