import Dispatch
import Foundation
import ObservableDefaults

/// `defaults watch suite [key...] [--prefix p] [--json]`: prints every change to the suite, from this
/// machine's other processes and from hand edits of the file, until SIGINT or SIGTERM (then exits 0).
struct WatchCommand {
    let access: SuiteAccess

    func run(_ arguments: [String], prefixes: [String]) throws(ToolError) -> Never {
        guard let name = arguments.first else {
            throw .usage("missing suite; usage: defaults watch suite [key...] [--prefix p] [--json]", verb: "watch")
        }
        guard prefixes.count <= 1 else { throw .usage("--prefix may be given once", verb: "watch") }
        let keys = arguments.count > 1 ? Set(arguments.dropFirst()) : nil
        // Watching a suite that does not exist yet is allowed: it shows up when something writes it.
        let suite = try access.openForWatching(name)
        let json = access.options.json

        let errors = suite.observeErrors { error in
            Console.err("defaults: \(error.description)")
        }
        let observation = suite.observe(keys: keys, prefix: prefixes.first, scope: .allProcesses) { change in
            for key in change.keys.sorted() {
                Console.out(
                    Self.line(
                        key: key, value: suite.value(forKey: key), origin: change.origin, layer: change.layer,
                        json: json))
            }
        }
        if let error = suite.fileError { Console.err("defaults: \(error.description)") }
        Console.err("Watching \(suite.fileURL.path) (press Ctrl-C to stop)")
        let signalSources = SignalExit.install {
            observation.cancel()
            errors.cancel()
        }
        withExtendedLifetime(signalSources) { dispatchMain() }
    }

    /// `12:30:00.250 outside theme = value` (`key deleted` for a removal; a change of another layer than
    /// the file names it: `outside (system /etc/xdg/observable-defaults/app.json)`), or one JSON object.
    static func line(
        key: String, value: DefaultsValue?, origin: DefaultsChangeOrigin, layer: DefaultsOrigin? = nil, json: Bool,
        now: Date = Date()
    ) -> String {
        var source = origin == .outside ? "outside" : "this-process"
        if let layer { source += " (\(layer))" }
        return WatchLine.text(key: key, value: value, sourceField: "origin", source: source, json: json, now: now)
    }
}

/// One line of `watch` output, shared by `watch` and `cloud watch`: the time, where the change came from
/// (`source`, a JSON field named `sourceField`), the key and its value.
enum WatchLine {
    /// `12:30:00.250 SOURCE key = value` (`key deleted` for a removal), or one JSON object.
    static func text(
        key: String, value: DefaultsValue?, sourceField: String, source: String, json: Bool, now: Date = Date()
    ) -> String {
        if json {
            var fields: [(String, DefaultsValue)] = [
                ("time", .string(DateText.iso8601(now))), (sourceField, .string(source)), ("key", .string(key))
            ]
            if let value {
                fields.append(("value", value))
                fields.append(("type", .string(value.typeName)))
            } else {
                fields.append(("removed", .bool(true)))
            }
            return JSONFormat.object(fields, pretty: false)
        }
        let time = DateText.timeOfDay(now)
        let keyText = HumanFormat.quoted(key)
        guard let value else { return "\(time) \(source) \(keyText) deleted" }
        return "\(time) \(source) \(keyText) = \(HumanFormat.inline(value))"
    }
}

/// Exits with status 0 on SIGINT or SIGTERM after running a cleanup (output is unbuffered).
enum SignalExit {
    /// Installs the handlers; keep the returned sources alive while they should work.
    static func install(_ cleanup: @escaping @Sendable () -> Void) -> [DispatchSourceSignal] {
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
            source.setEventHandler {
                cleanup()
                exit(0)
            }
            source.resume()
            sources.append(source)
        }
        return sources
    }
}
