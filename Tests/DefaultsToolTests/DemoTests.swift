import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `defaults-demo` (the README's first command) runs by itself, reports each change reaching its
/// `@ObservableDefaults` object, and cleans up.
@Suite struct DemoTests {
    @Test func demoReportsEveryChangeAndExitsByItself() throws {
        let demo = try StreamingProcess("defaults-demo", [], directory: nil)
        let status = demo.waitForExit(timeout: .seconds(30))
        let output = demo.stdout
        #expect(status == 0, "\(output)\n\(demo.stderr)")
        let arrivals = output.split(separator: "\n").filter { $0.contains("→ settings.") && $0.contains("arrived") }
        #expect(arrivals.count == 3, "\(output)")
        #expect(arrivals.contains { $0.contains("settings.volume is now 8; from this process") }, "\(output)")
        #expect(
            arrivals.contains {
                $0.contains("settings.greeting is now \"hello from another process\"; from another process")
            }, "\(output)")
        #expect(arrivals.contains { $0.contains("settings.theme is now \"dark\"; from a hand edit") }, "\(output)")
        // Observation notified each property once: no notification for a property that did not change.
        #expect(output.contains("Observer calls per property: greeting 1, volume 1, theme 1"), "\(output)")
        #expect(output.contains("defaults watch observable-defaults-demo"))
        #expect(output.contains("defaults write observable-defaults-demo greeting hi"))
        // The temporary suites directory is gone.
        let pid = demo.process.processIdentifier
        let leftover = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "observable-defaults-demo-\(pid)")
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
    }
}

/// `defaults-demo cloud`: two processes sync an `@ObservableCloud` object's properties through a throwaway
/// etcd node, or, without etcd, the development store with a simulated other machine and the install hint.
/// Either way each change notifies only its own property's observer, once per machine.
@Suite struct CloudDemoTests {
    @Test(ToolEtcd.required) func twoMachinesSyncThroughAThrowawayEtcdNode() throws {
        let demo = try StreamingProcess("defaults-demo", ["cloud"], directory: nil)
        let status = demo.waitForExit(timeout: .seconds(60))
        let output = demo.stdout
        #expect(status == 0, "\(output)\n\(demo.stderr)")
        #expect(
            output.contains("1. Machine A sets settings.volume = 8.\n   → machine B: settings.volume = 8 arrived "),
            "\(output)")
        #expect(output.contains(" ms after machine A's assignment\n"), "\(output)")
        #expect(output.contains("   → machine A: settings.greeting = \"hello from machine B\" arrived "), "\(output)")
        #expect(output.contains(" ms after machine B's assignment\n"), "\(output)")
        // Each machine's observers: its own write and the other's, once each; theme never.
        #expect(
            output.contains(
                """
                  machine A: greeting 1, volume 1, theme 0
                  machine B: greeting 1, volume 1, theme 0
                """), "\(output)")
        // The node was stopped by PID and its data directory removed.
        let started = try #require(
            output.split(separator: "\n").first { $0.hasPrefix("Started a throwaway etcd node") }, "\(output)")
        let pid = try #require(Int32(started.split(separator: "(pid ")[1].split(separator: ",")[0]))
        #expect(kill(pid, 0) != 0, "etcd \(pid) still runs")
        let data = String(started.split(separator: "data in ")[1].dropLast(2))
        #expect(!FileManager.default.fileExists(atPath: data), "\(data) is left behind")
        // Both machines' local copies lived in the demo's temporary directory, which is gone.
        let leftover = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "observable-defaults-demo-\(demo.process.processIdentifier)")
        #expect(!FileManager.default.fileExists(atPath: leftover.path), "\(leftover.path) is left behind")
    }

    @Test func withoutEtcdItRunsInDevelopmentModeAndSaysHowToInstall() throws {
        let demo = try StreamingProcess(
            "defaults-demo", ["cloud"], directory: nil, environment: ["PATH": "/nonexistent"])
        let status = demo.waitForExit(timeout: .seconds(30))
        let output = demo.stdout
        #expect(status == 0, "\(output)\n\(demo.stderr)")
        #expect(output.contains("etcd is not installed, so this runs in development mode"), "\(output)")
        #expect(output.contains("apt-get install -y etcd-server"), "\(output)")
        #expect(
            output.contains("1. This process sets settings.volume = 8.\n   → settings.volume = 8; observer called "),
            "\(output)")
        #expect(output.contains("   → settings.greeting = \"hello from elsewhere\"; observer called "), "\(output)")
        #expect(
            output.contains(
                "Observer calls per property: greeting 1, volume 1, theme 0 — each change notified only its own property."
            ),
            "\(output)")
    }
}
