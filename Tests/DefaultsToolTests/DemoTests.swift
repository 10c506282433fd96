import Foundation
import Testing

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
        #expect(arrivals.contains { $0.contains("settings.greeting is now \"hello from another process\"; from another process") }, "\(output)")
        #expect(arrivals.contains { $0.contains("settings.theme is now \"dark\"; from a hand edit") }, "\(output)")
        // Observation notified each property once: no notification for a property that did not change.
        #expect(output.contains("Observer calls per property: greeting 1, volume 1, theme 1"), "\(output)")
        #expect(output.contains("defaults watch observable-defaults-demo"))
        #expect(output.contains("defaults write observable-defaults-demo greeting hi"))
        // The temporary suites directory is gone.
        let pid = demo.process.processIdentifier
        let leftover = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("observable-defaults-demo-\(pid)")
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
    }
}
