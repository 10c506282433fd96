import Foundation
import ObservableDefaults

// `swift run defaults-demo`: no setup, no leftovers. The suite lives in a fresh temporary directory that is
// removed before exiting; the demo ends by itself in a few seconds (exit status 1 if a change got lost).
// `swift run defaults-demo cloud` shows two processes syncing through a throwaway etcd node instead.

let directory = URL(fileURLWithPath: NSTemporaryDirectory())
    .appendingPathComponent("observable-defaults-demo-\(getpid())", isDirectory: true)
let arguments = Array(CommandLine.arguments.dropFirst())

let succeeded: Bool
switch arguments.first {
case "cloud-machine" where arguments.count == 3:
    // The second machine of the cloud demo (started by it, not by hand).
    exit(CloudMachine.run(address: arguments[1], state: URL(fileURLWithPath: arguments[2], isDirectory: true)))
case "cloud" where arguments.count == 1:
    succeeded = CloudDemo.run(directory: directory)
case nil:
    do {
        let suite = try DefaultsSuite(name: Demo.suiteName, directory: directory)
        succeeded = Demo(directory: directory, suite: suite, settings: DemoSettings(userDefaults: suite)).run()
    } catch {
        say("defaults-demo: cannot open the demo suite: \(error)")
        succeeded = false
    }
default:
    say("usage: defaults-demo [cloud]")
    exit(2)
}
try? FileManager.default.removeItem(at: directory)
exit(succeeded ? 0 : 1)
